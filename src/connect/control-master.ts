/**
 * One SSH control master per connect run: it authenticates once (with the
 * user's own config, keys and agent, prompting on the terminal if it must),
 * then carries the remote login session, the port forward and the cancel.
 * Its socket lives in a private 0700 directory that is removed on close.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { serverText } from '../acp/redact.js';
import { AgyError, EXIT, InterruptedError, TimeoutError } from '../core/errors.js';
import { pause } from '../util/deadline.js';
import { formatDuration } from '../util/duration.js';

export interface MasterOptions {
  destination: string;
  /** ssh_config settings, passed as `-o OPT`. */
  sshOptions: string[];
  env: NodeJS.ProcessEnv;
  tempRoot: string;
  /** Give ssh the terminal so it can ask for a password or a host key confirmation. */
  interactive: boolean;
  /** Each line ssh writes to stderr (shown with --verbose), redacted and without control characters. */
  onLog?: (line: string) => void;
}

export type ProbeResult = { allowed: true; ms: number } | { allowed: false; ms: number; message: string };

export interface SshExit {
  code: number | null;
  signal: string | null;
}

export interface ControlResult {
  ok: boolean;
  message: string;
  /** runRemote only: the remote command's stdout and exit code (255: ssh itself failed). */
  stdout?: string;
  exitCode?: number | null;
}

const CONTROL_TIMEOUT_MS = 10_000;
/** One channel open and close over an existing connection: a round trip or two (bench/connect-route.mjs). */
const PROBE_TIMEOUT_MS = 5_000;
const CLOSE_TIMEOUT_MS = 5_000;
const READY_POLL_MS = 100;
const TAIL_LINES = 8;

/**
 * Started through `sh -c 'trap "" INT TERM; exec ssh ...'`: ssh keeps an
 * ignored SIGINT or SIGTERM ignored, so a Ctrl-C on the terminal, or a
 * SIGTERM to our whole process group (`timeout 20 agyctl connect …`),
 * reaches agyctl (which cancels the remote login over this master) without
 * killing the master first. It still shares our terminal, so password
 * prompts work; close() ends it with `-O exit`, else SIGKILL.
 */
const IGNORE_SIGINT = 'trap "" INT TERM; exec "$@"';

export class SshMaster {
  readonly socket: string;
  readonly exited: Promise<SshExit>;
  private readonly child: ResultPromise;
  private readonly tail: string[] = [];
  private exitInfo: SshExit | undefined;

  private constructor(
    readonly options: MasterOptions,
    readonly dir: string,
  ) {
    this.socket = path.join(dir, 'ctl');
    const args = [
      '-M',
      '-S',
      this.socket,
      '-N',
      '-o',
      'ControlPersist=no',
      '-o',
      'ExitOnForwardFailure=yes',
      '-o',
      'ClearAllForwardings=yes',
    ];
    for (const opt of options.sshOptions) args.push('-o', opt);
    args.push('--', options.destination);
    this.child = execa('sh', ['-c', IGNORE_SIGINT, 'sh', 'ssh', ...args], {
      env: options.env,
      extendEnv: false,
      stdin: options.interactive ? 'inherit' : 'ignore',
      stdout: 'ignore',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      cleanup: true,
    });
    // It ignores SIGTERM (above), so execa's cleanup cannot stop it: whatever way agyctl ends, it goes too.
    process.on('exit', this.killOnExit);
    const lines = readline.createInterface({ input: this.child.stderr! });
    lines.on('line', (line) => this.log(line));
    const drained = new Promise<void>((resolve) => lines.once('close', resolve));
    this.exited = this.child.then(async (r) => {
      await drained;
      this.exitInfo = { code: typeof r.exitCode === 'number' ? r.exitCode : null, signal: r.signal ?? null };
      return this.exitInfo;
    });
  }

  static start(options: MasterOptions): SshMaster {
    const dir = fs.mkdtempSync(path.join(options.tempRoot, 'agyctl-connect-'));
    fs.chmodSync(dir, 0o700);
    return new SshMaster(options, dir);
  }

  get destination(): string {
    return this.options.destination;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** ssh's stderr carries the remote side's words too (banners, its shell's errors): made safe to show on arrival. */
  private log(raw: string): void {
    const line = remoteText(raw);
    if (line.trim() === '') return;
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.options.onLog?.(line);
  }

  /** Arguments every client of this master starts with; ControlMaster=no so a client never becomes a master. */
  clientArgs(): string[] {
    return ['-S', this.socket, '-o', 'ControlMaster=no'];
  }

  /** ssh's own words about why the connection failed or dropped. */
  failure(what = 'failed'): AgyError {
    const said = this.tail.slice(-4).join('\n').trim();
    const how = this.exitInfo
      ? `ssh exited with code ${this.exitInfo.code ?? this.exitInfo.signal}`
      : 'ssh gave no reason';
    return new AgyError(EXIT.server, 'ssh-failed', `SSH to ${this.destination} ${what}: ${said || how}`, {
      hint: `check that \`ssh ${this.destination}\` works from this machine (network, keys, known_hosts); pass ssh settings with --ssh-option, e.g. --ssh-option Port=2222`,
    });
  }

  /** Poll until the master accepts clients (its socket exists and `-O check` agrees), it fails, the deadline passes or Ctrl-C. */
  async waitReady(timeoutMs: number, signal: AbortSignal): Promise<number> {
    const startedAt = Date.now();
    const deadline = startedAt + timeoutMs;
    for (;;) {
      if (signal.aborted) throw new InterruptedError();
      if (this.exitInfo) throw this.failure('failed');
      if (
        fs.existsSync(this.socket) &&
        (await this.control('check', [], Math.max(1, Math.min(CONTROL_TIMEOUT_MS, deadline - Date.now())))).ok
      ) {
        return Date.now() - startedAt;
      }
      if (Date.now() >= deadline) {
        throw new TimeoutError(
          `SSH to ${this.destination} did not finish connecting within ${formatDuration(timeoutMs)}.`,
          'check the host and network, or allow more time with --ssh-timeout (a password prompt counts against it)',
        );
      }
      await pause(READY_POLL_MS, { signal, until: this.exited });
    }
  }

  /** `ssh -S sock -O <op> ... host`: check, forward, cancel, exit. */
  async control(op: string, extra: string[] = [], timeoutMs = CONTROL_TIMEOUT_MS): Promise<ControlResult> {
    const r = await execa('ssh', [...this.clientArgs(), '-O', op, ...extra, '--', this.destination], {
      env: this.options.env,
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: timeoutMs,
      detached: true, // not in our process group: a Ctrl-C on the terminal must not cut a cleanup step short
    });
    const message = remoteText(`${String(r.stderr)}\n${String(r.stdout)}`.trim());
    return {
      ok: r.exitCode === 0,
      message: r.timedOut ? `ssh -O ${op} did not answer within ${formatDuration(timeoutMs)}` : message,
    };
  }

  forward(port: number): Promise<ControlResult> {
    return this.control('forward', ['-L', forwardSpec(port)]);
  }

  /**
   * Would sshd let a connection through a forward of `port`? sshd accepts
   * `-O forward` and refuses only each connection that goes through it
   * (AllowTcpForwarding, DisableForwarding, PermitOpen), so ask it once with
   * a stdio channel (`-W`) to the remote 127.0.0.1:<port>: a bare TCP connect
   * that sends nothing (stdin is empty) to the remote login's listener, which
   * closes it. Only a clean exit counts as allowed; a refusal, a failure or
   * no answer within the deadline does not.
   */
  async probeForward(port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
    const startedAt = Date.now();
    const r = await execa('ssh', [...this.clientArgs(), '-W', `127.0.0.1:${port}`, '--', this.destination], {
      env: this.options.env,
      extendEnv: false,
      stdin: 'ignore',
      stdout: 'ignore',
      reject: false,
      timeout: timeoutMs,
      detached: true,
    });
    const ms = Date.now() - startedAt;
    if (r.exitCode === 0) return { allowed: true, ms };
    const said = remoteText(String(r.stderr).trim());
    const why = r.timedOut
      ? `no answer within ${formatDuration(timeoutMs)}`
      : said || `ssh exited with ${r.exitCode ?? r.signal}`;
    return { allowed: false, ms, message: why };
  }

  cancelForward(port: number): Promise<ControlResult> {
    return this.control('cancel', ['-L', forwardSpec(port)]);
  }

  /** A command on the remote side over this master (the cancel, and a resumed login's status and finish); `input` goes to its stdin. */
  async runRemote(command: string, timeoutMs = CONTROL_TIMEOUT_MS, input?: string): Promise<ControlResult> {
    const r = await execa('ssh', [...this.clientArgs(), '-T', '--', this.destination, command], {
      env: this.options.env,
      extendEnv: false,
      ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
      reject: false,
      timeout: timeoutMs,
      detached: true,
    });
    return {
      ok: r.exitCode === 0,
      message: remoteText(String(r.stderr).trim()),
      stdout: String(r.stdout),
      exitCode: typeof r.exitCode === 'number' ? r.exitCode : null,
    };
  }

  /** Ask the master to exit, then make sure it did; remove the socket directory. Never throws. */
  async close(): Promise<void> {
    try {
      if (!this.exitInfo && fs.existsSync(this.socket)) await this.control('exit');
      if (!this.exitInfo && !(await settlesWithin(this.exited, CLOSE_TIMEOUT_MS))) {
        this.child.kill('SIGKILL');
        await settlesWithin(this.exited, CLOSE_TIMEOUT_MS);
      }
    } finally {
      process.off('exit', this.killOnExit);
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private readonly killOnExit = (): void => {
    if (!this.exitInfo) this.child.kill('SIGKILL');
  };
}

/** Text from ssh or the remote box, safe to keep and show: one line, redacted, no control characters. */
const remoteText = (text: string): string => serverText(text, { singleLine: true });

/** The forward connect adds: the laptop's 127.0.0.1:<port> to the remote's 127.0.0.1:<port> (Google redirects the browser to that exact port). */
export function forwardSpec(port: number): string {
  return `${port}:127.0.0.1:${port}`;
}

export function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void p.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}
