/**
 * Text from outside (a server, a remote agyctl, a pasted URL) on its way
 * to a terminal: escape sequences could set the window title, clear the
 * screen or rewrite what the user sees, so every control character goes.
 * Unicode format characters (category Cf: bidi overrides and isolates,
 * zero-width spaces and joiners, the BOM) go too: they reorder or hide what
 * the user reads (an RLO turns "moc.elgoog" into "google.com") while the
 * bytes say something else.
 * One function for every channel that shows such text.
 */

// CSI (ESC [ ... final), OSC (ESC ] ... BEL | ESC \), DCS/PM/APC/SOS strings, two-byte ESC sequences, 8-bit CSI.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g;
// C0 except \n, DEL, C1. A tab becomes a space below; everything else is removed.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_NEWLINE = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;
const FORMAT = /\p{Cf}/gu;

/** Removes ANSI escape sequences only (the framing keeps other bytes for parsing). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * Escape sequences and format characters removed, then every C0/C1 control character; newlines
 * are kept as line breaks unless `singleLine` (then they become spaces).
 */
export function sanitizeForTerminal(text: string, options: { singleLine?: boolean } = {}): string {
  const noAnsi = stripAnsi(text).replace(/\t/g, ' ').replace(/\r\n/g, '\n').replace(FORMAT, '');
  return options.singleLine
    ? noAnsi.replace(CONTROL_OR_NEWLINE, (c) => (c === '\n' || c === '\r' ? ' ' : ''))
    : noAnsi.replace(CONTROL, '');
}
