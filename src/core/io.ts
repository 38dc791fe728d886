/**
 * What a use case runs with: the process surroundings (RunContext), the
 * server it works on (ServerTarget), a Reporter for progress and events and
 * a protocol tracer. Tests build one by hand; for the real process,
 * main() in src/cli/main.ts builds the RunContext (bin/agyctl.js only calls
 * it) and run() the rest, once commander has parsed the global options.
 */
import type { Readable, Writable } from 'node:stream';
import type { ExitCode } from './errors.js';
import type { Reporter } from './reporter.js';
import type { ServerTarget } from './target.js';
import type { Tracer } from './trace.js';

export type TtyReadable = Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
/** columns/rows: the terminal's size (a tty.WriteStream keeps them current); absent when unknown or not a terminal. */
export type TtyWritable = Writable & { isTTY?: boolean; columns?: number; rows?: number };

export interface RunContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin: TtyReadable;
  stdout: TtyWritable;
  stderr: TtyWritable;
  /** Aborted on Ctrl-C (SIGINT), SIGTERM or SIGHUP (unless SIGHUP is claimed). */
  signal: AbortSignal;
  /**
   * A login hands itself over to its supervisor on SIGHUP instead of cancelling: it claims the signal while attached.
   * While claimed, SIGHUP calls onHangup instead of aborting `signal`; the returned function releases the claim.
   */
  claimHangup?: (onHangup: () => void) => () => void;
}

export interface CommandIO {
  ctx: RunContext;
  opts: ServerTarget;
  out: Reporter;
  tracer: Tracer;
}

export interface CommandResult {
  exit: ExitCode;
  /** Fields of the single `--json` document (schemaVersion and ok are added by main). */
  data?: Record<string, unknown>;
  /** A child (root's work as a state dir's owner) already wrote the command's output, --json document included. */
  written?: boolean;
}
