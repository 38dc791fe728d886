/** What a command runs with. Tests build one by hand; bin/agyctl.js builds it from the process. */
import type { Readable, Writable } from 'node:stream';
import type { Output } from './output.js';
import type { Tracer } from '../acp/trace.js';
import type { ExitCode } from '../core/errors.js';
import type { ProfileId, ProfileSource } from '../profiles/choose.js';

export type TtyReadable = Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
export type TtyWritable = Writable & { isTTY?: boolean; columns?: number };

export interface RunContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin: TtyReadable;
  stdout: TtyWritable;
  stderr: TtyWritable;
  /** Aborted on Ctrl-C (SIGINT), SIGTERM or SIGHUP (unless SIGHUP is claimed). */
  signal: AbortSignal;
  /** A login hands itself over to its supervisor on SIGHUP instead of cancelling: it claims the signal while attached. */
  hangup?: HangupControl;
}

export interface HangupControl {
  /** While claimed, SIGHUP calls onHangup instead of aborting `signal`; the returned function releases the claim. */
  claim(onHangup: () => void): () => void;
}

export interface GlobalOptions {
  stateDir: string;
  /** The raw --server / AGYCTL_SERVER command line, if any. */
  server: string | undefined;
  json: boolean;
  color: boolean;
  verbose: boolean;
  trace: string | undefined;
  /** The server profile (--profile / AGYCTL_PROFILE, else guessed; see src/profiles). Absent means antigravity. */
  profile?: ProfileId;
  profileSource?: ProfileSource;
  /** --state-dir or AGYCTL_STATE_DIR was given: a detected profile must not move it. */
  stateDirExplicit?: boolean;
}

export interface CommandIO {
  ctx: RunContext;
  opts: GlobalOptions;
  out: Output;
  tracer: Tracer;
}

export interface CommandResult {
  exit: ExitCode;
  /** Fields of the single `--json` document (schemaVersion and ok are added by main). */
  data?: Record<string, unknown>;
}
