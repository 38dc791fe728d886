/**
 * URLs in terminal text (the server's stdout noise lines and stderr). The
 * URL may be hidden inside an escape sequence (an OSC 8 hyperlink, whose
 * visible text is "Sign in to Google"), or cut into pieces by colour codes,
 * including the charset designation `ESC ( B` that tput's sgr0 emits and
 * that a plain CSI stripper leaves behind as "(B".
 */

// OSC 8 hyperlink: ESC ] 8 ; params ; URI, ended by BEL or ST (ESC \ or 0x9c); 0x9d is the 8-bit OSC.
const OSC8 = /(?:\x1b\]|\x9d)8;[^;\x07\x1b\x9c]*;([^\x07\x1b\x9c]*)(?:\x07|\x1b\\|\x9c)/g;
// CSI (7- and 8-bit), OSC/DCS/APC/PM strings, charset designations (ESC ( B), and other two-byte ESC sequences.
const ESCAPES =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|(?:\x1b[\]PX^_]|[\x90\x9d\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[()*+\-./][ -~]|\x1b[ -/]*[0-~]/g;
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;
export const URL_IN_TEXT = /https?:\/\/[^\s"'<>`\\]+/g;
/** Sentence punctuation after a URL in prose is not part of it. */
const TRAILING = /[.,;:!?)\]}]+$/;

export const withoutTrailingPunctuation = (url: string): string => url.replace(TRAILING, '');

/** URLs in plain text, without the punctuation prose puts after them. */
export function urlsInText(text: string): string[] {
  return (text.match(URL_IN_TEXT) ?? []).map(withoutTrailingPunctuation).filter((u) => u.length > 'https://'.length);
}

/** The text a terminal would show: every escape sequence and control character removed. */
export function visibleText(raw: string): string {
  return raw.replace(ESCAPES, '').replace(CONTROLS, '');
}

/** Every URL in a raw terminal line: hyperlink targets first, then the visible text. */
export function terminalUrls(raw: string): string[] {
  const out: string[] = [];
  for (const m of raw.matchAll(OSC8)) out.push(...urlsInText(m[1] ?? ''));
  out.push(...urlsInText(visibleText(raw)));
  return [...new Set(out)];
}
