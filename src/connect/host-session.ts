/**
 * agyctl connect, end to end: SSH control master, the remote login over it,
 * the route of the browser's redirect (forward, relay or paste-back; see
 * redirect-route.ts), the browser, and a clean exit on every path: no forward,
 * relay listener, master or remote server left.
 */
import { serverText } from '../acp/redact.js';
import { AgyError, asExitCode, EXIT, InterruptedError, TimeoutError, usageError } from '../core/errors.js';
import type { CommandIO, CommandResult } from '../core/io.js';
import { tempRoot } from '../core/paths.js';
import { type PasteReader, startPasteReader } from '../login/paste.js';
import { validateAuthUrl, validateCodeEntryUrl, validateElicitedUrl } from '../profiles/auth-url.js';
import { formatDuration } from '../util/duration.js';
import type { CallbackRelay, Delivery } from './callback-relay.js';
import { type ConnectOptions, sshOptionsFor } from './connect-options.js';
import { SshMaster, settlesWithin } from './control-master.js';
import type { ConnectEmit, ConnectEvent } from './events.js';
import type { ConnectTarget } from './inventory.js';
import { openBrowser } from './open-browser.js';
import { resumeAfterDrop } from './reconnect.js';
import { chooseRoute, type RouteChoice } from './redirect-route.js';
import { remoteLoginCommand } from './remote-command.js';
import {
  knownEvent,
  type RawEvent,
  type RemoteEvent,
  type RemoteEventOf,
  RemoteLogin,
  type SessionExit,
} from './remote-login.js';

/** The ways to put agyctl on a box, none of which needs Node or a network there (docs/install.md). */
export const INSTALL_ON_THE_BOX =
  'install it there: the .deb (`dpkg -i agyctl_<version>_amd64.deb`), the single executable (`install -m 0755 agyctl-<version>-linux-x64 /usr/local/bin/agyctl`) or the agyctl.fleet Ansible role (docs/install.md); or pass the remote command with --remote-agyctl';

/** The remote login runs its proof (a fresh server, default 60 s) after the sign-in; our session deadline allows for it. */
const AFTER_SIGN_IN_MARGIN_MS = 180_000;
const MASTER_EXIT_WAIT_MS = 3_000;
/** The remote login answers a relayed redirect once its listener answered it (login delivers within 15 s). */
const RELAY_ANSWER_MS = 30_000;

/** One host: connect, then the login flow there. */
export async function runConnect(io: CommandIO, options: ConnectOptions, emit: ConnectEmit): Promise<CommandResult> {
  const target = options.targets[0]!;
  const master = SshMaster.start({
    destination: target.destination,
    sshOptions: sshOptionsFor(options, target),
    env: io.ctx.env,
    tempRoot: tempRoot(io.ctx.env),
    interactive: Boolean(io.ctx.stdin.isTTY),
    onLog: (line) => emit({ type: 'ssh-log', line }),
  });
  try {
    const ms = await master.waitReady(options.sshTimeoutMs, io.ctx.signal);
    emit({ type: 'connected', destination: target.destination, ms });
    const healthy = options.force ? undefined : await alreadySignedIn(io, master, options, emit);
    if (healthy) return healthy;
    return await new ConnectSession({ io, master, options, target, emit }).run();
  } finally {
    await master.close();
  }
}

/**
 * As fleet connect does: `agyctl check --live` on the box first, so working credentials are not
 * replaced without a word (docs/login.md). A box that passes is left as it is (--force signs in
 * anyway); any other answer (not signed in, a failure, no agyctl there) goes on to the login, which
 * says what it meets.
 */
async function alreadySignedIn(
  io: CommandIO,
  master: SshMaster,
  options: ConnectOptions,
  emit: ConnectEmit,
): Promise<CommandResult | undefined> {
  const { runRemoteCheck } = await import('./remote-check.js');
  const check = await runRemoteCheck(master, options.remoteAgyctl, io.ctx.signal);
  if (check.interrupted || io.ctx.signal.aborted) throw new InterruptedError();
  if (check.status === undefined) return undefined;
  const { status, exit, ms, liveMs, findings } = check;
  emit({ type: 'host-checked', status, exit, ms, liveMs, ahead: false, findings });
  if (exit !== EXIT.ok) return undefined;
  emit({ type: 'already-signed-in', destination: master.destination });
  return { exit: EXIT.ok, data: { connect: { destination: master.destination, healthy: true, checkStatus: status } } };
}

/** A one-host session: where it runs, its host and the connected master, and where its events go. */
export interface SessionParts {
  io: CommandIO;
  master: SshMaster;
  options: ConnectOptions;
  target: ConnectTarget;
  emit: ConnectEmit;
}

/** The one-host flow on a master that is already connected (fleet connect checks the host over it first). */
export function connectOver(parts: SessionParts): Promise<CommandResult> {
  return new ConnectSession(parts).run();
}

class ConnectSession {
  private login!: RemoteLogin;
  private chain: Promise<void> = Promise.resolve();
  private forwardedPort: number | undefined;
  /** The route of the browser's redirect, once the URL arrived. */
  private choice: RouteChoice | undefined;
  private relay: CallbackRelay | undefined;
  private relayWaiter: ((d: Delivery) => void) | undefined;
  private browser: { ok: boolean; reason?: string } | undefined;
  private paste: PasteReader | undefined;
  private signedIn = false;
  private remoteDeadline: number | undefined;
  private remoteError: RemoteEventOf<'error'> | undefined;
  private verified: RemoteEventOf<'verified'> | undefined;
  private urlPort: number | undefined;
  /** stdin ended while only a paste could finish the sign-in (no forward): the login was stopped. */
  private noPasteInput = false;

  private readonly io: CommandIO;
  private readonly master: SshMaster;
  private readonly options: ConnectOptions;
  private readonly emit: ConnectEmit;
  private readonly target: ConnectTarget;
  /** The host's destination, as given to ssh. */
  private readonly destination: string;

  constructor(parts: SessionParts) {
    this.io = parts.io;
    this.master = parts.master;
    this.options = parts.options;
    this.emit = parts.emit;
    this.target = parts.target;
    this.destination = parts.target.destination;
  }

  async run(): Promise<CommandResult> {
    const command = remoteLoginCommand({
      remoteAgyctl: this.options.remoteAgyctl,
      method: this.options.method,
      timeout: this.options.timeout,
    });
    this.emit({ type: 'detail', message: `remote command: ${command}` });
    this.login = RemoteLogin.start({
      master: this.master,
      command,
      timeoutMs: this.options.timeoutMs + AFTER_SIGN_IN_MARGIN_MS,
      onEvent: (ev) => this.onEvent(ev),
      onOutput: (line) => this.say({ type: 'remote-output', line }),
    });
    const aborted = await raceAbort(this.login.exited, this.io.ctx.signal);
    let told = true;
    if (aborted && !this.login.hasExited) {
      this.stopPaste();
      this.emit({ type: 'cancelling' });
      told = await this.login.cancel();
    }
    const exit = await this.login.exited;
    this.relayWaiter?.({ ok: false, reason: 'the remote login has ended' });
    // A session cut by a dropped connection may end just before the master's own exit is seen.
    if (!aborted && exit.code === 255 && !this.master.hasExited)
      await settlesWithin(this.master.exited, MASTER_EXIT_WAIT_MS);
    await this.chain; // a URL being handled finishes (bounded) before the teardown removes what it added
    await this.teardown();
    if (this.dropped(exit, aborted)) {
      const deadline = this.remoteDeadline ?? Date.now() + this.options.timeoutMs;
      const { destination } = this;
      const { remoteAgyctl, sshTimeoutMs } = this.options;
      const sshOptions = sshOptionsFor(this.options, this.target);
      return resumeAfterDrop(
        this.io,
        { destination, sshOptions, remoteAgyctl, sshTimeoutMs, deadline },
        this.urlPort,
        this.emit,
      );
    }
    if (!told) this.emit({ type: 'cancel-unreached' });
    return this.outcome(exit, aborted);
  }

  /** The connection went away under a remote login that had shown its URL: it survives there, so reconnect. */
  private dropped(exit: SessionExit, aborted: boolean): boolean {
    return (
      !aborted &&
      exit.code !== 0 &&
      this.master.hasExited &&
      this.urlPort !== undefined &&
      !this.verified &&
      !this.remoteError
    );
  }

  private enqueue(step: () => Promise<void>): void {
    this.chain = this.chain
      .then(step)
      .catch((err: unknown) => this.emit({ type: 'step-failed', message: (err as Error).message }));
  }

  /** An event that may arrive while the TTY paste prompt is showing: its text goes above the prompt, drawn again. */
  private say(event: ConnectEvent): void {
    const prompting = this.paste !== undefined && Boolean(this.io.ctx.stdin.isTTY);
    this.emit(event, prompting ? () => this.paste?.refresh() : undefined);
  }

  private onEvent(raw: RawEvent): void {
    const ev = knownEvent(raw);
    if (ev?.event === 'url') {
      const check = checkRemoteUrl(ev);
      if (!check.ok) {
        this.rejectUrl(check.reason);
        return;
      }
    }
    if (ev?.event === 'authenticated') this.stopPaste(); // nothing left to paste; the prompt goes before the news
    const relayed = this.relayWaiter !== undefined && ev?.event === 'redirect-delivered';
    this.say({ type: 'remote-event', raw, known: ev, relayed });
    this.answerRelay(ev);
    // A paste or relayed address holds the prompt until the remote login answers: asked again only when it was
    // refused, the login failed or a new URL came; a delivered one is followed by the sign-in's end.
    if (
      ev?.event === 'redirect-rejected' ||
      ev?.event === 'code-rejected' ||
      ev?.event === 'error' ||
      ev?.event === 'url'
    )
      this.paste?.resume();
    switch (ev?.event) {
      case 'url':
        if (ev.mode === 'device') {
          this.enqueue(() => this.onDevicePage(String(ev.url)));
          break;
        }
        if (typeof ev.port === 'number') this.urlPort = ev.port;
        this.enqueue(() => this.onUrl(ev));
        break;
      case 'waiting':
        this.remoteDeadline = Date.now() + Number(ev.remainingS ?? 0) * 1000;
        break;
      case 'authenticated':
        this.signedIn = true;
        this.enqueue(() => this.afterSignIn());
        break;
      case 'verified':
        this.verified = ev;
        break;
      case 'error':
        this.remoteError = ev;
        break;
      default:
        break;
    }
  }

  /** A URL the laptop does not trust is never printed, passed through or opened; a real one may still follow. */
  private rejectUrl(reason: string): void {
    this.say({ type: 'url-rejected', reason });
  }

  /** Choose the route (forward, relay or paste), then the browser. */
  private async onUrl(ev: RemoteEventOf<'url'>): Promise<void> {
    const url = String(ev.url);
    const port = Number(ev.port);
    const choice = await chooseRoute({
      master: this.master,
      url,
      port,
      deliver: (address) => this.deliverOverSession(address),
      onRefused: (reason) => this.say({ type: 'relay-refused', reason: serverText(reason, { singleLine: true }) }),
    });
    this.choice = choice;
    this.relay = choice.relay;
    if (choice.route === 'forward') this.forwardedPort = port;
    if (this.io.ctx.signal.aborted || this.login.hasExited) return;
    this.emit({ type: 'route', choice, url, destination: this.destination, open: this.options.open });
    if (this.options.open) await this.openInBrowser(url);
    if (!this.signedIn && !this.login.hasExited) this.startPaste();
  }

  /**
   * A device-code or verification page: the remote server learns the outcome
   * itself, so there is nothing to forward, relay or paste; show it (and
   * open it) and wait for the remote login's answer.
   */
  private async onDevicePage(url: string): Promise<void> {
    if (this.io.ctx.signal.aborted || this.login.hasExited) return;
    this.emit({ type: 'device-page', url, destination: this.destination });
    if (this.options.open) await this.openInBrowser(url);
  }

  private async openInBrowser(url: string): Promise<void> {
    this.browser = await openBrowser(url);
    this.emit({ type: 'browser-opened', ...this.browser });
  }

  /** The relayed address goes to the remote login's stdin, like a paste; its next delivered/rejected event answers. */
  private deliverOverSession(address: string): Promise<Delivery> {
    if (this.login.hasExited || this.signedIn)
      return Promise.resolve({ ok: false, reason: 'the remote login is no longer waiting' });
    return new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          finish({ ok: false, reason: `no answer from the remote login within ${formatDuration(RELAY_ANSWER_MS)}` }),
        RELAY_ANSWER_MS,
      );
      const finish = (d: Delivery): void => {
        clearTimeout(timer);
        this.relayWaiter = undefined;
        if (!d.ok) this.paste?.resume();
        resolve(d);
      };
      this.relayWaiter = finish;
      this.paste?.hold();
      this.login.send(address);
    });
  }

  private answerRelay(ev: RemoteEvent | undefined): void {
    const answer = this.relayWaiter;
    if (!answer) return;
    if (ev?.event === 'redirect-delivered') answer({ ok: true, status: Number(ev.status) });
    else if (ev?.event === 'authenticated') answer({ ok: true });
    else if (ev?.event === 'redirect-rejected') answer({ ok: false, reason: String(ev.reason ?? 'no reason given') });
    else if (ev?.event === 'error') answer({ ok: false, reason: String(ev.message ?? 'the login failed') });
  }

  private startPaste(): void {
    if (this.paste) return;
    this.paste = startPasteReader(
      this.io,
      { text: () => this.promptText(), deadline: () => this.remoteDeadline },
      (line) => {
        if (line.trim() === '') return undefined;
        this.login.send(line.trim());
        return false;
      },
      () => {
        // On the paste route only a paste finishes the sign-in: waiting for one stdin can never give is pointless.
        if (this.choice?.route !== 'paste' || this.signedIn || this.login.hasExited) return;
        this.noPasteInput = true;
        void this.login.cancel();
      },
    );
  }

  private promptText(): string {
    return this.choice?.route === 'paste'
      ? 'paste the address your browser ended on'
      : 'waiting for the browser (or paste the address it ended on)';
  }

  private stopPaste(): void {
    this.paste?.close();
    this.paste = undefined;
  }

  private async afterSignIn(): Promise<void> {
    this.stopPaste();
    this.login.endInput();
    await this.removeForward();
    await this.closeRelay();
  }

  private async closeRelay(): Promise<void> {
    const relay = this.relay;
    if (!relay) return;
    this.relay = undefined;
    await relay.close();
    this.emit({ type: 'relay-closed', port: relay.port });
  }

  private async removeForward(): Promise<void> {
    const port = this.forwardedPort;
    if (port === undefined) return;
    this.forwardedPort = undefined;
    if (this.master.hasExited) return;
    const r = await this.master.cancelForward(port);
    this.emit({ type: 'forward-removed', port, ok: r.ok, message: r.message });
  }

  private async teardown(): Promise<void> {
    this.stopPaste();
    await this.removeForward();
    await this.closeRelay();
  }

  private outcome(exit: SessionExit, aborted: boolean): CommandResult {
    const data = {
      connect: {
        destination: this.destination,
        route: this.choice?.route ?? null,
        forwarded: this.choice?.reason === undefined,
        fallbackReason: this.choice?.reason ?? null,
        browser: this.browser ?? null,
        remoteExit: exit.code,
      },
    };
    if (exit.code === 0) {
      this.emit({ type: 'logged-in', destination: this.destination, verified: this.verified });
      return { exit: EXIT.ok, data };
    }
    if (aborted) {
      if (this.remoteError?.exit !== EXIT.interrupted) throw new InterruptedError();
      this.emit({ type: 'cancelled' });
      return { exit: EXIT.interrupted, data };
    }
    if (this.noPasteInput)
      throw usageError(
        `Port ${this.urlPort} could not be forwarded (${this.choice?.reason ?? 'no reason given'}), and stdin is closed, so the address your browser ends on cannot be pasted; the remote login was stopped.`,
        `run \`agyctl connect ${this.destination}\` from a terminal (or pipe the address into its stdin), or free port ${this.urlPort} on this machine so the forward works`,
      );
    if (exit.timedOut)
      throw new TimeoutError(
        `The remote login did not finish within ${formatDuration(this.options.timeoutMs + AFTER_SIGN_IN_MARGIN_MS)}.`,
        'run `agyctl connect` again; pass --timeout for a longer sign-in window',
      );
    if (this.remoteError) {
      // The remote login's own timeout hint names `agyctl login`; the user ran connect.
      const hint =
        this.remoteError.code === 'timeout'
          ? `run \`agyctl connect ${this.destination} --timeout 20m\` for more time; the URL is single-use, so open the new one`
          : this.remoteError.hint === undefined
            ? undefined
            : String(this.remoteError.hint);
      this.emit({
        type: 'remote-failed',
        destination: this.destination,
        message: String(this.remoteError.message ?? 'the login failed'),
        hint,
      });
      return { exit: asExitCode(exit.code ?? Number(this.remoteError.exit)), data };
    }
    throw this.failure(exit);
  }

  private failure(exit: SessionExit): AgyError {
    const said = this.login.stderrTail();
    if (exit.code === 127 || exit.code === 126) {
      return new AgyError(
        EXIT.server,
        'remote-agyctl-missing',
        `agyctl could not be run on ${this.destination} as \`${this.options.remoteAgyctl}\`${said ? ` (${said})` : ''}.`,
        {
          hint: `${INSTALL_ON_THE_BOX}, e.g. --remote-agyctl /opt/agyctl/agyctl`,
        },
      );
    }
    if (this.master.hasExited) return this.master.failure('dropped the connection');
    if (exit.code === 255 || exit.code === null) {
      return new AgyError(
        EXIT.server,
        'ssh-failed',
        `The SSH session on ${this.destination} failed: ${said || `ssh exited with ${exit.code ?? exit.signal}`}`,
        { hint: `check that \`ssh ${this.destination}\` can run commands there` },
      );
    }
    return new AgyError(
      EXIT.server,
      'remote-failed',
      `The remote agyctl exited with code ${exit.code} without reporting why${said ? `: ${said}` : '.'}`,
      {
        hint: `run \`${this.options.remoteAgyctl} login\` on ${this.destination} to see what happens there`,
      },
    );
  }
}

/**
 * The laptop's own check of a remote url event, with login's validator: a
 * Google sign-in URL whose redirect goes to 127.0.0.1 on exactly the port
 * the event names (the one we forward); code-entry URLs by their validator.
 */
export function checkRemoteUrl(ev: RemoteEventOf<'url'>): { ok: true } | { ok: false; reason: string } {
  const url = typeof ev.url === 'string' ? ev.url : '';
  if (ev.mode === 'device') {
    const v = validateElicitedUrl(url);
    if (!v.ok) return v;
    return v.value.kind === 'device'
      ? { ok: true }
      : { ok: false, reason: 'a device page event carried a loopback sign-in URL' };
  }
  if (ev.mode === 'code-entry') {
    const v = validateCodeEntryUrl(url);
    return v.ok ? { ok: true } : v;
  }
  const v = validateAuthUrl(url);
  if (!v.ok) return v;
  if (v.value.port !== Number(ev.port))
    return { ok: false, reason: `its redirect port ${v.value.port} is not the port to forward (${String(ev.port)})` };
  return { ok: true };
}

/** Resolves true on Ctrl-C, false when the work ends first. */
function raceAbort(work: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(true);
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(false);
    });
  });
}
