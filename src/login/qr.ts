/**
 * `login --qr`: whether the QR code of a sign-in URL fits the terminal it is
 * drawn on. A sign-in URL is long, so even the half-block code (one column
 * and half a row per module) is some 90 columns by 45 rows; a wrapped line
 * makes it unscannable, and a code taller than the screen pushes the URL and
 * the tunnel command (drawn under it) out of sight. So it is drawn only when
 * it fits together with those lines, and is otherwise replaced by one note.
 */
import type { TtyWritable } from '../core/io.js';
import { stripAnsi } from '../util/terminal-text.js';

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** Where the code would be drawn: a terminal (with its size when the terminal tells it) or not. */
export interface Screen {
  tty: boolean;
  size: TerminalSize | undefined;
}

export type QrFit = { draw: true } | { draw: false; note: string };

/** The countdown prompt the wait draws under the lines (one row). */
const PROMPT_ROWS = 1;

export function screenOf(stream: TtyWritable): Screen {
  const { columns, rows } = stream;
  const known = (n: number | undefined): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0;
  return { tty: Boolean(stream.isTTY), size: known(columns) && known(rows) ? { columns, rows } : undefined };
}

/** qrcode-terminal's half-block code, as lines (its trailing newline dropped). */
export async function qrLines(text: string): Promise<string[]> {
  const { default: qrcode } = await import('qrcode-terminal');
  const art = await new Promise<string>((resolve) => qrcode.generate(text, { small: true }, resolve));
  return art.replace(/\n+$/, '').split('\n');
}

/** Columns a line takes: colour codes take none; everything we print is one column per code point. */
export function lineWidth(line: string): number {
  return [...stripAnsi(line)].length;
}

/** Rows the lines take once the terminal wraps them at `columns`. */
export function wrappedRows(lines: readonly string[], columns: number): number {
  return lines.reduce((sum, l) => sum + Math.max(1, Math.ceil(lineWidth(l) / columns)), 0);
}

/**
 * Draw the code when it fits the screen in width, and in height together
 * with the lines that must stay visible under it (`after`) and the prompt.
 * Not a terminal (a pipe, a file): drawn, as no line wraps there and the
 * reader decides how to show it.
 */
export function fitQr(qr: readonly string[], screen: Screen, after: readonly string[]): QrFit {
  if (!screen.tty) return { draw: true };
  const width = Math.max(1, ...qr.map(lineWidth));
  // The smallest terminal that fits: as wide as the code, tall enough for the code and the lines wrapped at that width.
  const needs = `${width}×${qr.length + wrappedRows(after, width) + PROMPT_ROWS}`;
  if (!screen.size)
    return { draw: false, note: `QR code left out (needs ${needs}, terminal size unknown): use the URL.` };
  const { columns, rows } = screen.size;
  if (width <= columns && qr.length + wrappedRows(after, columns) + PROMPT_ROWS <= rows) return { draw: true };
  return {
    draw: false,
    note: `QR code left out (needs ${needs}, terminal is ${columns}×${rows}): enlarge it or use the URL.`,
  };
}
