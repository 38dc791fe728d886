/**
 * One server process: spawned in its own process group, spoken to over
 * stdio, and always stopped as a group (gemini-cli's launcher ignores
 * SIGTERM and relaunches itself as a child, so killing one pid is not enough).
 */
import { execa, type ResultPromise } from 'execa';
import { Connection, type ServerMessageHandler } from './connection.js';
import { nullTracer, type Tracer } from './trace.js';
import { groupAlive, registerGroup, signalGroup, unregisterGroup, waitGroupGone } from './children.js';
import { LineSplitter, stripAnsi } from './framing.js';
import type { ServerCommand } from './resolve.js';
import { AgyError, EXIT } from '../errors.js';
import { serverHomeFor } from '../paths.js';

export interface ServerExit {
  code: number | null;
  signal: string | null;
  /** Spawn itself failed (ENOENT, EACCES): the server never ran. */
  spawnError: string | undefined;
}

export interface StartServerOptions {
  command: ServerCommand;
  /** The environment to start from (agyctl's own); HOME is adjusted to the state dir when possible. */
  env: NodeJS.ProcessEnv;
  stateDir: string;
  cwd: string;
  tracer?: Tracer;
  /** Called for each stderr line and each non-JSON stdout line (URL capture reads both); `raw` keeps the escape sequences (OSC 8 links). */
  onOutputLine?: (line: string, stream: 'stdout' | 'stderr', raw: string) => void;
  /** The server's environment for the state dir (a profile's HOME steering); default serverEnv(). */
  serverEnv?: (base: NodeJS.ProcessEnv, stateDir: string) => NodeJS.ProcessEnv;
  /** Every JSON-RPC message from the server (login's URL capture scans them); subscribed before the first byte is read. */
  onServerMessage?: ServerMessageHandler;
  /** An output line that means the call in flight cannot succeed (an interactive sign-in): every pending call rejects with the error returned. */
  failOn?: (line: string, stream: 'stdout' | 'stderr') => Error | undefined;
}

const STDERR_TAIL_LINES = 20;
export const STOP_GRACE_MS = 1_000;
export const KILL_AFTER_MS = 5_000;
/** Bound on waiting for a SIGKILLed group to be reaped. */
const GROUP_REAP_MS = 2_000;

export function serverEnv(base: NodeJS.ProcessEnv, stateDir: string): NodeJS.ProcessEnv {
  const home = serverHomeFor(stateDir);
  return home ? { ...base, HOME: home } : { ...base };
}

export class AcpServer {
  readonly connection: Connection;
  readonly pid: number;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<ServerExit>;
  private exitInfo: ServerExit | undefined;
  private readonly stderrLines: string[] = [];
  private stopping = false;

  private constructor(
    private readonly child: ResultPromise,
    readonly command: ServerCommand,
    tracer: Tracer,
    output: StartServerOptions['onOutputLine'],
    failOn: StartServerOptions['failOn'],
    onServerMessage: StartServerOptions['onServerMessage'],
    /** Taken just before the spawn, so spawn-to-initialize timings include process creation. */
    readonly startedAt: number,
  ) {
    this.pid = child.pid ?? -1;
    if (this.pid > 0) registerGroup(this.pid);
    this.connection = new Connection(child.stdout!, child.stdin!, tracer);
    if (onServerMessage) this.connection.onServerMessage(onServerMessage);
    const onOutputLine = (line: string, stream: 'stdout' | 'stderr', raw: string): void => {
      output?.(line, stream, raw);
      const err = failOn?.(line, stream);
      if (err) this.connection.fail(err);
    };
    this.connection.onNoise((line, raw) => onOutputLine(line, 'stdout', raw));
    const splitter = new LineSplitter();
    child.stderr!.on('data', (chunk: Buffer) => {
      for (const raw of splitter.push(chunk)) {
        const line = stripAnsi(raw).replace(/\r$/, '');
        this.stderrLines.push(line);
        if (this.stderrLines.length > STDERR_TAIL_LINES) this.stderrLines.shift();
        tracer.record('stderr', line);
        onOutputLine(line, 'stderr', raw);
      }
    });
    this.exited = child.then((result) => {
      const info: ServerExit = {
        code: typeof result.exitCode === 'number' ? result.exitCode : null,
        signal: result.signal ?? null,
        spawnError: result.failed && result.exitCode === undefined && !result.signal ? result.cause instanceof Error ? result.cause.message : 'spawn failed' : undefined,
      };
      this.exitInfo = info;
      this.connection.fail(this.exitError(info));
      return info;
    });
  }

  static start(options: StartServerOptions): AcpServer {
    const { command } = options;
    const startedAt = Date.now();
    const child = execa(command.file, command.args, {
      cwd: options.cwd,
      env: (options.serverEnv ?? serverEnv)(options.env, options.stateDir),
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
    return new AcpServer(child, command, options.tracer ?? nullTracer, options.onOutputLine, options.failOn, options.onServerMessage, startedAt);
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
    const how = info.spawnError ? `could not be started: ${info.spawnError}` : info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    const message = this.stopping ? `The server was stopped.` : `The server ${how}.${tail ? `\n--- server stderr (last lines) ---\n${tail}` : ''}`;
    return new AgyError(EXIT.server, info.spawnError ? 'server-start-failed' : 'server-exited', message, {
      hint: info.spawnError ? `check the server command: ${this.command.display}` : 'run `agyctl probe --verbose` to see the server start, or check its log',
      details: { server: { code: info.code, signal: info.signal, stderrTail: tail } },
    });
  }

  /**
   * Stop the whole group: close stdin (a well-behaved server exits on EOF),
   * wait briefly, SIGTERM the group, SIGKILL it after KILL_AFTER_MS. Always
   * returns with the group gone.
   */
  async stop(graceMs = STOP_GRACE_MS): Promise<ServerExit> {
    this.stopping = true;
    if (this.pid <= 0) return this.exited;
    this.child.stdin?.end();
    if (!(await this.exitedWithin(graceMs))) {
      signalGroup(this.pid, 'SIGTERM');
      if (!(await this.exitedWithin(KILL_AFTER_MS))) signalGroup(this.pid, 'SIGKILL');
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
