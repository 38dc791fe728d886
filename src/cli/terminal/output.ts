/**
 * Data goes to stdout (human lines, or exactly one JSON document / NDJSON
 * events with --json); everything meant for a person watching goes to
 * stderr, so `agyctl ... --json | jq` always sees clean JSON.
 */
import {
  type CommandIO,
  type Palette,
  PLAIN,
  type Reporter,
  type ServerNote,
  type TtyWritable,
} from '../../core/io.js';
import { stripAnsi } from '../../util/terminal-text.js';
import { serverNoteText } from './server-notes.js';
import { fitLine, visibleWidth, wrapProse } from './wrap.js';

export { type Palette, PLAIN };

/** chalk costs ~15 ms to import: pay it only when a TTY will show the colours. */
export async function loadPalette(enabled: boolean): Promise<Palette> {
  if (!enabled) return PLAIN;
  const { Chalk } = await import('chalk');
  return new Chalk({ level: 1 });
}

export const JSON_SCHEMA_VERSION = 1;

export interface OutputOptions {
  json: boolean;
  color: boolean;
  verbose: boolean;
}

export class Output implements Reporter {
  /** Colours for stdout and stderr; plain when colour is off or the stream is not a TTY. */
  readonly c: Palette;
  readonly e: Palette;

  constructor(
    private readonly stdout: TtyWritable,
    private readonly stderr: TtyWritable,
    readonly options: OutputOptions,
    palette: Palette = PLAIN,
  ) {
    this.c = options.color && stdout.isTTY ? palette : PLAIN;
    this.e = options.color && stderr.isTTY ? palette : PLAIN;
  }

  static async create(stdout: TtyWritable, stderr: TtyWritable, options: OutputOptions): Promise<Output> {
    const wanted = options.color && Boolean(stdout.isTTY || stderr.isTTY);
    return new Output(stdout, stderr, options, await loadPalette(wanted));
  }

  get json(): boolean {
    return this.options.json;
  }

  get stderrIsTTY(): boolean {
    return Boolean(this.stderr.isTTY);
  }

  get stdoutIsTTY(): boolean {
    return Boolean(this.stdout.isTTY);
  }

  get stderrEscapes(): boolean {
    return this.options.color && Boolean(this.stderr.isTTY);
  }

  /**
   * A line of human-readable data on stdout; suppressed in --json mode. On a terminal a line longer than its
   * width is broken at spaces (a pipe or file gets it whole); `verbatim` for a value to copy (a URL, a command).
   */
  print(line = '', opts: { verbatim?: boolean } = {}): void {
    if (this.options.json) return;
    const width = this.stdout.isTTY && this.stdout.columns ? this.stdout.columns : undefined;
    const shown = width && !opts.verbatim ? wrapProse(line, width, continuationIndent(line)) : line;
    this.stdout.write(`${shown}\n`);
  }

  /** Prose for a person on stderr, wrapped at spaces on a terminal; `verbatim` for text to copy (a URL, a command, a QR code). */
  info(message: string, opts: { verbatim?: boolean } = {}): void {
    this.stderr.write(`${opts.verbatim ? message : this.prose(message)}\n`);
  }

  warn(message: string): void {
    this.stderr.write(`${this.labelled('warning:', message, this.e.yellow)}\n`);
  }

  /** The terminal's width when stderr is one; undefined otherwise (a pipe or file gets lines as they are). */
  private get width(): number | undefined {
    return this.stderr.isTTY && this.stderr.columns ? this.stderr.columns : undefined;
  }

  private prose(text: string, indent = ''): string {
    const width = this.width;
    return width ? wrapProse(text, width, indent) : text;
  }

  /** `label text`, wrapped as prose, with the label coloured after the wrap (colour codes take no columns). */
  private labelled(label: string, text: string, colour: (s: string) => string): string {
    const wrapped = this.prose(`${label} ${text}`, '  ');
    return `${colour(label)}${wrapped.slice(label.length)}`;
  }

  verbose(message: string): void {
    if (this.options.verbose) this.stderr.write(`${this.e.dim(message)}\n`);
  }

  server(note: ServerNote): void {
    const { how, text } = serverNoteText(note);
    this[how](text);
  }

  /** Columns the last status line took: without escape sequences, a shorter redraw blanks the rest with spaces. */
  private statusWidth = 0;

  /**
   * Overwrite the current stderr line (countdowns, progress); only on a TTY. With colour off (NO_COLOR,
   * TERM=dumb, --no-color) no escape sequence is written: a carriage return and spaces do the same.
   */
  status(message: string): void {
    if (!this.stderr.isTTY) return;
    const line = fitLine(message, this.stderr.columns);
    if (this.options.color) {
      this.stderr.write(`\r\x1b[2K${line}`);
      return;
    }
    const width = visibleWidth(line);
    this.stderr.write(`\r${line}${' '.repeat(Math.max(0, this.statusWidth - width))}`);
    this.statusWidth = width;
  }

  clearStatus(): void {
    if (!this.stderr.isTTY) return;
    if (this.options.color) this.stderr.write('\r\x1b[2K');
    else if (this.statusWidth > 0) this.stderr.write(`\r${' '.repeat(this.statusWidth)}\r`);
    this.statusWidth = 0;
  }

  /** One NDJSON event on stdout (streaming commands in --json mode only). */
  event(event: Record<string, unknown>): void {
    if (this.options.json) this.stdout.write(`${JSON.stringify(event)}\n`);
  }

  /** The single --json document. */
  document(doc: Record<string, unknown>): void {
    this.stdout.write(`${JSON.stringify({ schemaVersion: JSON_SCHEMA_VERSION, ...doc }, null, 2)}\n`);
  }

  error(message: string, hint?: string): void {
    this.stderr.write(`${this.labelled('error:', message, this.e.red)}\n`);
    if (hint) this.stderr.write(`${this.labelled('hint:', hint, this.e.dim)}\n`);
  }
}

/**
 * Where a wrapped data line continues: under its value when it reads `label   value` (check's rows,
 * `settings show`), else two columns in from its own indentation.
 */
function continuationIndent(line: string): string {
  const plain = stripAnsi(line);
  const column = /^(\s*\S.{0,28}?\s{2,})\S/.exec(plain)?.[1]?.length;
  const lead = /^\s*/.exec(plain)?.[0].length ?? 0;
  return ' '.repeat(column ?? lead + 2);
}

/** Colour unless --no-color, NO_COLOR (any non-empty value) or not a TTY (checked per stream). */
export function wantColor(flag: boolean, env: NodeJS.ProcessEnv): boolean {
  if (!flag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return env.TERM !== 'dumb';
}

/**
 * A value to copy, alone on its stdout line. With stdout piped (`login | tee`, a script keeping the URL)
 * and stderr on the terminal, it is shown there too, so its label never stands alone.
 */
export function printValue(out: Reporter, value: string): void {
  out.print(value, { verbatim: true });
  if (!out.stdoutIsTTY && out.stderrIsTTY) out.info(value, { verbatim: true });
}

/** A label for the person (stderr) and the value under it. */
export function labelled(io: CommandIO, label: string, value: string): void {
  io.out.info(label);
  printValue(io.out, value);
}
