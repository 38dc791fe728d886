/**
 * What a use case runs with: the process surroundings (RunContext), the
 * server it works on (ServerTarget), a Reporter for progress and events and
 * a protocol tracer. Tests build one by hand; for the real process,
 * main() in src/cli/main.ts builds the RunContext (bin/agyctl.js only calls
 * it) and src/cli/invoke.ts the rest, once commander has chosen a command.
 *
 * The Reporter is what use cases call to tell a person (or a --json reader)
 * what happens; src/cli/terminal/output.ts implements it, so use cases never
 * see a stream, a TTY check or a colour decision beyond what it offers. The
 * file-backed tracer (acp/file-tracer.ts) is loaded only with --trace.
 */
import type { Readable, Writable } from 'node:stream';
import type { ExitCode } from './errors.js';

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

/**
 * ServerTarget: which server a use case works on: the state dir, the --server command and
 * the profile. The CLI builds one from the global options; a detected
 * profile yields a new one (profiles/adopt.ts), nothing mutates it.
 */
export const PROFILE_IDS = ['antigravity', 'gemini-cli'] as const;
export type ProfileId = (typeof PROFILE_IDS)[number];

/** How the profile in use was chosen, strongest first. */
export type ProfileSource = 'flag' | 'env' | 'server-command' | 'detected' | 'default';

export interface ServerTarget {
  stateDir: string;
  /** The raw --server / AGYCTL_SERVER command line, if any. */
  server: string | undefined;
  /** The server profile (--profile / AGYCTL_PROFILE, else guessed; see src/profiles). Absent means antigravity. */
  profile?: ProfileId;
  profileSource?: ProfileSource;
  /** --state-dir or AGYCTL_STATE_DIR was given: a detected profile must not move it. */
  stateDirExplicit?: boolean;
}

/** The few styles agyctl uses. Identity functions when colour is off, so chalk is loaded only when needed. */
export interface Palette {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const id = (s: string): string => s;
export const PLAIN: Palette = { red: id, green: id, yellow: id, dim: id, bold: id };

/**
 * What the layers under a use case tell a person as it runs, as facts the CLI
 * words (cli/terminal/server-notes.ts): the server's own output (redacted, on
 * one line) and the protocol layer's notes, both for --verbose; and which
 * profile the server reported it is, followed or (one asked for) kept.
 */
export type ServerNote =
  | { about: 'output'; stream: 'stdout' | 'stderr'; line: string }
  | { about: 'protocol'; text: string }
  | { about: 'profile-followed'; agentName: string | undefined; title: string; profile: ProfileId; stateDir: string }
  | { about: 'profile-kept'; agentName: string | undefined; detected: ProfileId; asked: ProfileId };

export interface Reporter {
  /** Colours for stdout and stderr; plain when colour is off or the stream is not a TTY. */
  readonly c: Palette;
  readonly e: Palette;
  /** --json: stdout carries JSON only (one document, or NDJSON events). */
  readonly json: boolean;
  readonly stderrIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
  /** Escape sequences may be written on stderr: a TTY with colour on (not NO_COLOR, TERM=dumb or --no-color). */
  readonly stderrEscapes: boolean;
  /** A line of human-readable data on stdout (URLs and commands to copy stand alone on theirs); suppressed in --json mode. */
  print(line?: string, opts?: { verbatim?: boolean }): void;
  /** Prose on stderr (wrapped at spaces on a terminal); `verbatim`: text to copy, never wrapped. */
  info(message: string, opts?: { verbatim?: boolean }): void;
  warn(message: string): void;
  verbose(message: string): void;
  /** What the server and the layers under the use case said (ServerNote): worded by the CLI. */
  server(note: ServerNote): void;
  /** Overwrite the current stderr line (countdowns, progress); only on a TTY. */
  status(message: string): void;
  clearStatus(): void;
  /** One NDJSON event on stdout (streaming commands in --json mode only). */
  event(event: Record<string, unknown>): void;
  error(message: string, hint?: string): void;
}

export type TraceDirection = 'send' | 'recv' | 'stdout-noise' | 'stderr' | 'event';

export interface Tracer {
  record(direction: TraceDirection, payload: unknown): void;
  close(): void;
}

export const nullTracer: Tracer = { record() {}, close() {} };
