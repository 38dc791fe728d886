/**
 * Prose for a terminal: lines longer than its width are broken at spaces,
 * so a word (a path, a URL) is never cut in two the way the terminal's own
 * wrap cuts it. A word longer than the width stays whole on its own line.
 * Text that is not prose (a URL or command to copy, a QR code) is never
 * given to it.
 */
import { stripAnsi } from '../../util/terminal-text.js';

/** Columns a string takes: code points, ANSI colour codes not counted. */
export function visibleWidth(text: string): number {
  return Array.from(stripAnsi(text)).length;
}

/** Each line of `text` broken at spaces to fit `width` columns; continuation lines get `indent`. */
export function wrapProse(text: string, width: number, indent = ''): string {
  if (!(width > 10)) return text;
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, indent))
    .join('\n');
}

function wrapLine(line: string, width: number, indent: string): string {
  if (visibleWidth(line) <= width) return line;
  // The line's own indentation (a table's column) is kept on its first line.
  const lead = /^ */.exec(line)?.[0] ?? '';
  const out: string[] = [];
  let current = lead;
  let fresh = true;
  for (const word of line.slice(lead.length).split(' ')) {
    const candidate = fresh ? `${current}${word}` : `${current} ${word}`;
    if (fresh || visibleWidth(candidate) <= width) current = candidate;
    else {
      out.push(current);
      // A word (a path) that fits the line but not after the indent starts at the left edge: whole, not cut.
      current = visibleWidth(`${indent}${word}`) <= width ? `${indent}${word}` : word;
    }
    fresh = false;
  }
  out.push(current);
  return out.join('\n');
}

/** One status line cut to the width (a longer one would wrap, and the next redraw would stack a new line). */
export function fitLine(text: string, width: number | undefined): string {
  if (!width || width < 2 || visibleWidth(text) < width) return text;
  const plain = Array.from(stripAnsi(text));
  return `${plain.slice(0, width - 2).join('')}…`;
}
