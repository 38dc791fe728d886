/**
 * What use cases call to tell a person (or a --json reader) what happens.
 * src/cli/terminal/output.ts implements it; use cases never see a stream,
 * a TTY check or a colour decision beyond what this interface offers.
 */

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

export interface Reporter {
  /** Colours for stdout and stderr; plain when colour is off or the stream is not a TTY. */
  readonly c: Palette;
  readonly e: Palette;
  /** --json: stdout carries JSON only (one document, or NDJSON events). */
  readonly json: boolean;
  readonly stderrIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
  /** A line of human-readable data on stdout (URLs and commands to copy stand alone on theirs); suppressed in --json mode. */
  print(line?: string): void;
  /** Prose on stderr (wrapped at spaces on a terminal); `verbatim`: text to copy, never wrapped. */
  info(message: string, opts?: { verbatim?: boolean }): void;
  warn(message: string): void;
  verbose(message: string): void;
  /** Overwrite the current stderr line (countdowns, progress); only on a TTY. */
  status(message: string): void;
  clearStatus(): void;
  /** One NDJSON event on stdout (streaming commands in --json mode only). */
  event(event: Record<string, unknown>): void;
  error(message: string, hint?: string): void;
}
