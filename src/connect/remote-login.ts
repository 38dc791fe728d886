/**
 * The remote `agyctl login --json`, run as a session on the control master.
 * Its stdout is NDJSON events; its stdin takes pasted redirect addresses.
 *
 * sshd sends no signal to a command without a terminal when the client goes
 * away (measured with OpenSSH 9.2: it keeps running), so closing the session
 * does not cancel a login. The cancel therefore sends SIGTERM to the remote
 * agyctl by pid (printed by the wrapper in remote-command.ts) over the
 * master, and waits for it to stop its server and exit.
 */
import readline from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { registerGroup, unregisterGroup } from '../acp/children.js';
import { serverText } from '../acp/redact.js';
import type { AgyError } from '../core/errors.js';
import type { PublicLoginEvent } from '../login/events.js';
import { sanitizeForTerminal } from '../util/terminal-text.js';
import { type SshMaster, settlesWithin } from './control-master.js';
import { PID_MARKER } from './remote-command.js';

/** A line the remote sent as an event, cleaned; its name may be one this agyctl does not know (a newer remote). */
export type RawEvent = Record<string, unknown> & { event: string };

/** The remote's final error event, as main writes it for a failed streaming command. */
type ErrorEvent = { event: 'error' } & ReturnType<AgyError['toJSON']>;

/**
 * Read as if untrusted: the remote is another agyctl on another box, maybe
 * another version, so only the event's name has been checked; each field
 * login's own type names may be absent or hold any JSON value.
 */
type Untrusted<E> = E extends { event: infer N }
  ? { event: N } & { readonly [K in Exclude<keyof E, 'event'>]?: unknown }
  : never;

/** An event of the remote login: one of login's NDJSON lines (`PublicLoginEvent`) or its final error. */
export type RemoteEvent = Untrusted<PublicLoginEvent | ErrorEvent>;
export type RemoteEventOf<N extends RemoteEvent['event']> = Extract<RemoteEvent, { event: N }>;

const REMOTE_EVENT_NAMES: Record<RemoteEvent['event'], true> = {
  'server-started': true,
  url: true,
  'url-rejected': true,
  'no-url-yet': true,
  waiting: true,
  'redirect-rejected': true,
  'redirect-delivered': true,
  'code-rejected': true,
  'code-sent': true,
  authenticated: true,
  'url-withdrawn': true,
  'auth-status': true,
  'settings-changed': true,
  'profile-detected': true,
  verified: true,
  restarted: true,
  detached: true,
  error: true,
};

/** The event by its name, or undefined for a name login does not emit (it is still passed through with --json). */
export function knownEvent(ev: RawEvent): RemoteEvent | undefined {
  return Object.hasOwn(REMOTE_EVENT_NAMES, ev.event) ? (ev as RemoteEvent) : undefined;
}

export interface SessionExit {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
}

export interface RemoteLoginOptions {
  master: SshMaster;
  command: string;
  /** The whole remote login must end by then (its own --timeout plus the proof and a margin). */
  timeoutMs: number;
  onEvent(event: RawEvent): void;
  /** Remote stderr lines (agyctl's warnings, shell noise) and stdout lines that are not events. */
  onOutput(line: string, stream: 'stdout' | 'stderr'): void;
}

/** The remote login stops its server within its own grace (1 s) plus kill delay (5 s); allow more. */
const CANCEL_WAIT_MS = 15_000;
const PID_WAIT_MS = 3_000;
const TAIL_LINES = 8;
const MAX_LINE_CHARS = 4_000;

export class RemoteLogin {
  readonly exited: Promise<SessionExit>;
  /** The remote agyctl's pid, once the wrapper has printed it. */
  remotePid: number | undefined;
  private readonly child: ResultPromise;
  private readonly tail: string[] = [];
  private exitInfo: SessionExit | undefined;
  private pidSeen: () => void = () => undefined;
  private readonly pidKnown = new Promise<void>((resolve) => (this.pidSeen = resolve));

  private constructor(private readonly options: RemoteLoginOptions) {
    const { master } = options;
    this.child = execa('ssh', [...master.clientArgs(), '-T', '--', master.destination, options.command], {
      env: master.options.env,
      extendEnv: false,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      timeout: options.timeoutMs,
      detached: true, // a terminal Ctrl-C reaches agyctl only; agyctl then cancels the remote side properly
    });
    const pid = this.child.pid;
    if (pid) registerGroup(pid);
    this.child.stdin!.on('error', () => undefined); // the session may end while we write
    const out = readline.createInterface({ input: this.child.stdout! });
    out.on('line', (line) => this.onStdout(line));
    const err = readline.createInterface({ input: this.child.stderr! });
    err.on('line', (line) => this.onStderr(line));
    const drained = Promise.all([once(out), once(err)]);
    this.exited = this.child.then(async (r) => {
      await drained;
      if (pid) unregisterGroup(pid);
      this.exitInfo = {
        code: typeof r.exitCode === 'number' ? r.exitCode : null,
        signal: r.signal ?? null,
        timedOut: Boolean(r.timedOut),
      };
      return this.exitInfo;
    });
  }

  static start(options: RemoteLoginOptions): RemoteLogin {
    return new RemoteLogin(options);
  }

  // Everything the remote side says is untrusted: events and lines are cleaned here, before anyone sees them.
  private onStdout(line: string): void {
    const event = parseEvent(line);
    if (event) this.options.onEvent(cleanEvent(event));
    else if (line.trim()) this.options.onOutput(serverText(line, { singleLine: true }), 'stdout');
  }

  private onStderr(line: string): void {
    const m = new RegExp(`^${PID_MARKER} (\\d+)$`).exec(line.trim());
    if (m && this.remotePid === undefined) {
      this.remotePid = Number(m[1]);
      this.pidSeen();
      return;
    }
    const shown = serverText(line, { singleLine: true }).slice(0, MAX_LINE_CHARS);
    if (!shown.trim()) return;
    this.tail.push(shown);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.options.onOutput(shown, 'stderr');
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** The last lines the remote side (or ssh) wrote to stderr. */
  stderrTail(): string {
    return this.tail.slice(-4).join('\n').trim();
  }

  /** One pasted line for the remote login to validate and deliver. Never logged. */
  send(line: string): void {
    const stdin = this.child.stdin;
    if (stdin && !stdin.writableEnded && !this.exitInfo) stdin.write(`${line}\n`);
  }

  endInput(): void {
    const stdin = this.child.stdin;
    if (stdin && !stdin.writableEnded) stdin.end();
  }

  /**
   * Cancel: close its input, SIGTERM the remote agyctl (it stops its server
   * and exits 130), and wait for the session to end. Returns whether the
   * remote side was told; the local session is gone either way.
   */
  async cancel(): Promise<boolean> {
    this.endInput();
    if (this.exitInfo) return true;
    if (this.remotePid === undefined) await settlesWithin(this.pidKnown, PID_WAIT_MS);
    let told = false;
    if (this.remotePid !== undefined && !this.exitInfo) {
      told = (await this.options.master.runRemote(`kill -TERM ${this.remotePid}`)).ok;
    }
    if (!(await settlesWithin(this.exited, CANCEL_WAIT_MS))) {
      this.child.kill('SIGKILL');
      await settlesWithin(this.exited, CANCEL_WAIT_MS);
    }
    return told;
  }
}

function once(rl: readline.Interface): Promise<void> {
  return new Promise((resolve) => rl.once('close', resolve));
}

/**
 * A remote event with every string stripped of control characters and
 * redacted; the url keeps its state (the user needs it) and is validated by
 * the host session before it is shown or opened.
 */
export function cleanEvent(ev: RawEvent): RawEvent {
  const clean = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return serverText(v, { singleLine: true });
    if (depth > 8 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => clean(x, depth + 1));
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => [
        sanitizeForTerminal(k, { singleLine: true }),
        clean(x, depth + 1),
      ]),
    );
  };
  const out = clean(ev, 0) as RawEvent;
  if (typeof ev.url === 'string') out.url = sanitizeForTerminal(ev.url, { singleLine: true });
  return out;
}

export function parseEvent(line: string): RawEvent | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const v = value as Record<string, unknown>;
    if (typeof v.event === 'string') return v as RawEvent;
    // A usage error is reported as one JSON document even by a streaming command: treat it as the error event.
    if (v.ok === false && v.error && typeof v.error === 'object')
      return { ...(v.error as Record<string, unknown>), event: 'error' };
  } catch {
    /* not an event */
  }
  return undefined;
}
