/**
 * One server process: spawned in its own process group, spoken to over
 * stdio, and always stopped as a group (gemini-cli's launcher ignores
 * SIGTERM and relaunches itself as a child, so killing one pid is not enough).
 */
import { execa, type ResultPromise } from 'execa';
import { AgyError, EXIT } from '../core/errors.js';
import { nullTracer, type Tracer } from '../core/io.js';
import { serverHomeFor } from '../core/paths.js';
import { isPersonalAccountRefusal, personalAccountRefused } from './account-refusal.js';
import { groupAlive, registerGroup, signalGroup, unregisterGroup, waitGroupGone } from './children.js';
import { Connection, type ServerMessageHandler } from './connection.js';
import { LineSplitter, stripAnsi } from './framing.js';
import { serverText } from './redact.js';
import type { ServerCommand } from './resolve.js';

export interface ServerExit {
  code: number | null;
  signal: string | null;
  /** Spawn itself failed (ENOENT, EACCES): the server never ran. */
  spawnError: string | undefined;
}

/** What the caller hears of the server's output and calls. */
export interface ServerHooks {
  /** Each stderr line and each non-JSON stdout line, redacted and stripped of control characters: safe to show. */
  onOutputLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * The same lines unredacted, for URL capture only: `line` has escape sequences removed, `raw` keeps them
   * (OSC 8 hyperlinks live there). They may hold the sign-in URL's state: never show them.
   */
  onRawOutputLine?: (line: string, stream: 'stdout' | 'stderr', raw: string) => void;
  /** Every JSON-RPC message from the server (login's URL capture scans them); subscribed before the first byte is read. */
  onServerMessage?: ServerMessageHandler;
  /** Something a person may want to know with --verbose (an overlong line was dropped). */
  onNote?: (message: string) => void;
  /** An output line that means the call in flight cannot succeed (an interactive sign-in): every pending call rejects with the error returned. */
  failOn?: (line: string, stream: 'stdout' | 'stderr') => Error | undefined;
}

export interface StartServerOptions extends ServerHooks {
  command: ServerCommand;
  /** The environment to start from (agyctl's own); HOME is adjusted to the state dir when possible. */
  env: NodeJS.ProcessEnv;
  stateDir: string;
  cwd: string;
  tracer?: Tracer;
  /** The server's environment for the state dir (a profile's HOME steering); default serverEnv(). */
  serverEnv?: (base: NodeJS.ProcessEnv, stateDir: string) => NodeJS.ProcessEnv;
}

const STDERR_TAIL_LINES = 20;
/** Characters kept of one stderr tail line; a stderr line longer than STDERR_LINE_BYTES is dropped. */
const STDERR_TAIL_LINE_CHARS = 2_000;
const STDERR_LINE_BYTES = 64 * 1024;
export const STOP_GRACE_MS = 1_000;
export const KILL_AFTER_MS = 5_000;
/** Once a deadline has passed (or the run failed), SIGKILL follows SIGTERM this soon, so the documented bound holds. */
export const KILL_AFTER_LATE_MS = 1_000;
const MIN_KILL_AFTER_MS = 500;
/** How long after its stdout closes a server may take to exit before that counts as a protocol failure. */
const STDOUT_CLOSED_GRACE_MS = 1_000;
/** Bound on waiting for a SIGKILLed group to be reaped. */
const GROUP_REAP_MS = 2_000;

export interface StopOptions {
  /** How long a server may take to exit on stdin EOF before SIGTERM. */
  graceMs?: number;
  /** SIGTERM to SIGKILL. */
  killAfterMs?: number;
}

/** The TERM->KILL wait that fits a deadline: min(5 s, max(0.5 s, what is left)), or ~1 s once it has passed. */
export function killAfterFor(deadlineAt: number | undefined, now = Date.now()): number {
  if (deadlineAt === undefined) return KILL_AFTER_MS;
  const left = deadlineAt - now;
  if (left <= 0) return KILL_AFTER_LATE_MS;
  return Math.min(KILL_AFTER_MS, Math.max(MIN_KILL_AFTER_MS, left));
}

/**
 * Variables that say "this is an SSH session". Some Google builds pick their token store by them (a file when set,
 * the OS keyring otherwise), so a login over SSH and the role's systemd timer would look in different places.
 * Every server agyctl starts runs without them, whoever starts it and however (docs/assumptions.md, `start.ssh-env`).
 */
export const SSH_SESSION_VARS = ['SSH_CONNECTION', 'SSH_CLIENT', 'SSH_TTY'] as const;

export function withoutSshSession(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const k of SSH_SESSION_VARS) delete out[k];
  return out;
}

export function serverEnv(base: NodeJS.ProcessEnv, stateDir: string): NodeJS.ProcessEnv {
  const home = serverHomeFor(stateDir);
  return home ? { ...base, HOME: home } : { ...base };
}

/** A server process just spawned, with what it was started from. */
interface SpawnedServer {
  child: ResultPromise;
  command: ServerCommand;
  tracer: Tracer;
  startedAt: number;
}

export class AcpServer {
  readonly connection: Connection;
  readonly pid: number;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<ServerExit>;
  private exitInfo: ServerExit | undefined;
  private readonly stderrLines: string[] = [];
  private stopping = false;

  private readonly child: ResultPromise;
  readonly command: ServerCommand;
  /** Taken just before the spawn, so spawn-to-initialize timings include process creation. */
  readonly startedAt: number;

  private constructor(spawned: SpawnedServer, hooks: ServerHooks) {
    const { child, tracer } = spawned;
    this.child = child;
    this.command = spawned.command;
    this.startedAt = spawned.startedAt;
    this.pid = child.pid ?? -1;
    if (this.pid > 0) registerGroup(this.pid);
    const note = (stream: string) => (bytes: number) =>
      hooks.onNote?.(`dropped a ${bytes}-byte line from the server's ${stream} (longer than agyctl keeps)`);
    this.connection = new Connection(child.stdout!, child.stdin!, tracer, note('stdout'));
    if (hooks.onNote) {
      const onNote = hooks.onNote;
      this.connection.onCallSettled((method, ms, ok) => onNote(`${method}: ${ok ? 'answered' : 'failed'} in ${ms} ms`));
      this.connection.onRequestAnswered((method, how) => onNote(`the server asked ${method}: ${how}`));
    }
    if (hooks.onServerMessage) this.connection.onServerMessage(hooks.onServerMessage);
    // Redacted at the source: the tail, the trace and every display see only serverText().
    const onOutputLine = (line: string, stream: 'stdout' | 'stderr', raw: string): string => {
      const shown = serverText(line);
      hooks.onRawOutputLine?.(line, stream, raw);
      hooks.onOutputLine?.(shown, stream);
      const err = hooks.failOn?.(line, stream);
      if (err) this.connection.fail(err);
      return shown;
    };
    this.connection.onNoise((line, raw) => void onOutputLine(line, 'stdout', raw));
    this.connection.onEnd(() => this.watchStdoutClosed());
    const splitter = new LineSplitter(STDERR_LINE_BYTES, note('stderr'));
    child.stderr!.on('data', (chunk: Buffer) => {
      for (const raw of splitter.push(chunk)) {
        const shown = onOutputLine(stripAnsi(raw).replace(/\r$/, ''), 'stderr', raw);
        this.stderrLines.push(
          shown.length > STDERR_TAIL_LINE_CHARS ? `${shown.slice(0, STDERR_TAIL_LINE_CHARS)}…` : shown,
        );
        if (this.stderrLines.length > STDERR_TAIL_LINES) this.stderrLines.shift();
        tracer.record('stderr', shown);
      }
    });
    this.exited = child.then((result) => {
      const info: ServerExit = {
        code: typeof result.exitCode === 'number' ? result.exitCode : null,
        signal: result.signal ?? null,
        spawnError:
          result.failed && result.exitCode === undefined && !result.signal
            ? result.cause instanceof Error
              ? result.cause.message
              : 'spawn failed'
            : undefined,
      };
      this.exitInfo = info;
      this.connection.fail(this.exitError(info));
      return info;
    });
  }

  static start(options: StartServerOptions): AcpServer {
    const { command } = options;
    options.onNote?.(`starting the server: ${serverText(command.display, { singleLine: true })} (in ${options.cwd})`);
    const startedAt = Date.now();
    const child = execa(command.file, command.args, {
      cwd: options.cwd,
      env: withoutSshSession((options.serverEnv ?? serverEnv)(options.env, options.stateDir)),
      extendEnv: false,
      detached: true, // its own process group, so we can signal the whole tree
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      cleanup: true,
      encoding: 'buffer',
    });
    return new AcpServer({ child, command, tracer: options.tracer ?? nullTracer, startedAt }, options);
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  get exitStatus(): ServerExit | undefined {
    return this.exitInfo;
  }

  stderrTail(): string {
    return this.stderrLines.join('\n').trim();
  }

  /** The error every pending call gets when the process goes away. */
  exitError(info: ServerExit): AgyError {
    const tail = this.stderrTail();
    if (!this.stopping && isPersonalAccountRefusal(tail)) return personalAccountRefused();
    const how = info.spawnError
      ? `could not be started: ${info.spawnError}`
      : info.signal
        ? `was killed by ${info.signal}`
        : `exited with code ${info.code}`;
    const message = this.stopping
      ? `The server was stopped.`
      : `The server ${how}.${tail ? `\n--- server stderr (last lines) ---\n${tail}` : ''}`;
    return new AgyError(EXIT.server, info.spawnError ? 'server-start-failed' : 'server-exited', message, {
      hint: info.spawnError
        ? `check the server command: ${this.command.display}`
        : 'run `agyctl probe --verbose` to see the server start, or check its log',
      details: { server: { code: info.code, signal: info.signal, stderrTail: tail } },
    });
  }

  /**
   * Stop the whole group: close stdin (a well-behaved server exits on EOF),
   * wait briefly, SIGTERM the group, SIGKILL it after killAfterMs (callers
   * with a deadline pass killAfterFor(deadline)). Always returns with the
   * group gone.
   */
  async stop(options: StopOptions = {}): Promise<ServerExit> {
    const { graceMs = STOP_GRACE_MS, killAfterMs = KILL_AFTER_MS } = options;
    this.stopping = true;
    if (this.pid <= 0) return this.exited;
    this.child.stdin?.end();
    if (!(await this.exitedWithin(graceMs))) {
      signalGroup(this.pid, 'SIGTERM');
      if (!(await this.exitedWithin(killAfterMs))) signalGroup(this.pid, 'SIGKILL');
    }
    const info = await this.exited;
    // The leader may be gone while children it spawned (shims, relaunches) linger.
    if (groupAlive(this.pid)) {
      signalGroup(this.pid, 'SIGKILL');
      // So that "stopped" means no member of the group exists any more (launchers the server spawned included).
      await waitGroupGone(this.pid, GROUP_REAP_MS);
    }
    unregisterGroup(this.pid);
    return info;
  }

  /** stdout ends just before a normal exit; a server that stays up without its protocol channel can never answer. */
  private watchStdoutClosed(): void {
    if (this.exitInfo || this.stopping) return;
    const timer = setTimeout(() => {
      if (this.exitInfo || this.stopping) return;
      this.connection.fail(
        new AgyError(
          EXIT.server,
          'protocol-error',
          'The server closed its stdout (the protocol channel) but kept running, so it cannot answer.',
          {
            hint: 'run `agyctl probe --verbose` to see the server start, or check its log; this is a server problem, not a timeout',
          },
        ),
      );
    }, STDOUT_CLOSED_GRACE_MS);
    timer.unref();
  }

  /** Synchronous last resort (used on the way out). */
  kill(): void {
    this.stopping = true;
    if (this.pid > 0) signalGroup(this.pid, 'SIGKILL');
  }

  private exitedWithin(ms: number): Promise<boolean> {
    if (this.exitInfo) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
