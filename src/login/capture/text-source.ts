/**
 * URLs in terminal text (the server's stdout noise lines and stderr). The
 * URL may be hidden inside an escape sequence (an OSC 8 hyperlink, whose
 * visible text is "Sign in to Google"), or cut into pieces by colour codes,
 * including the charset designation `ESC ( B` that tput's sgr0 emits and
 * that a plain CSI stripper leaves behind as "(B".
 *
 * A URL may also reach us in pieces across lines of one stream: wrapped at
 * a terminal width, or its prefix (`https://accounts.google.com/o/oauth2/v2`)
 * printed on one line and the rest on the next. A URL candidate that fails
 * validation and ends its line is held as a prefix; the following lines
 * that are made only of URL characters (no spaces) are appended; the whole
 * is validated once the run ends (a line that is not a continuation, the
 * bounds, or a short quiet period), so a wrap that happens to validate
 * midway is not taken cut short. A prefix alone is never taken.
 *
 * Such a URL may be drawn inside a box (`│ … │`, `| … |`, with `╭──╮` or
 * `+--+` rules above and below). The frame is taken off each line before
 * the line is read, box-drawing characters and `|` never belong to a URL,
 * and a rule line continues nothing, so the box ends a run.
 */

// OSC 8 hyperlink: ESC ] 8 ; params ; URI, ended by BEL or ST (ESC \ or 0x9c); 0x9d is the 8-bit OSC.
const OSC8 = /(?:\x1b\]|\x9d)8;[^;\x07\x1b\x9c]*;([^\x07\x1b\x9c]*)(?:\x07|\x1b\\|\x9c)/g;
// CSI (7- and 8-bit), OSC/DCS/APC/PM strings, charset designations (ESC ( B), and other two-byte ESC sequences.
const ESCAPES =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|(?:\x1b[\]PX^_]|[\x90\x9d\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[()*+\-./][ -~]|\x1b[ -/]*[0-~]/g;
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;
// Box-drawing and block characters (U+2500-U+259F) and `|` end a URL: they are a frame around it, never part of it.
export const URL_IN_TEXT = /https?:\/\/[^\s"'<>`\\|\u2500-\u259f]+/g;
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

/** A box's side on a line: the vertical bars at its ends (light, heavy, double, ASCII) and the padding inside them. */
const LEFT_FRAME = /^\s*[│┃║|]\s*/;
const RIGHT_FRAME = /\s*[│┃║|]\s*$/;

/** A line of visible text without the box drawn around it, if any (a line with no frame is returned as it is). */
export function unframed(visible: string): string {
  return visible.replace(LEFT_FRAME, '').replace(RIGHT_FRAME, '');
}

/** Every URL in a raw terminal line: hyperlink targets first, then the visible text (without a box's frame). */
export function terminalUrls(raw: string): string[] {
  const out: string[] = [];
  for (const m of raw.matchAll(OSC8)) out.push(...urlsInText(m[1] ?? ''));
  out.push(...urlsInText(unframed(visibleText(raw))));
  return [...new Set(out)];
}

/** The characters a URL in terminal text is made of (as text-source.ts reads them). */
const URL_LINE = /^[^\s"'<>`\\|\u2500-\u259f]+$/;
/** A piece of a URL has a letter, a digit or an escape in it; a rule of `+---+` or `====` has none. */
const URL_PIECE = /[A-Za-z0-9%]/;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** Bounds: a sign-in URL is a few hundred characters; wrapped at 40 columns that is well under 32 lines. */
export const MAX_JOIN_LINES = 32;
export const MAX_JOINED_CHARS = 8192;
/** How long a held run waits for one more line before it is judged as it is. */
export const SETTLE_MS = 250;

export interface JoinedUrl {
  text: string;
  lines: number;
  /** Why the first line's candidate alone was not taken (lines === 1 only). */
  reason: string;
  /** That candidate was already reported once. */
  repeat: boolean;
}

/** The URL that ends this line of visible text, as matched (trailing punctuation kept: the next line may continue it). */
export function trailingUrl(visible: string): string | undefined {
  const end = visible.trimEnd().length;
  let last: RegExpMatchArray | undefined;
  for (const m of visible.matchAll(URL_IN_TEXT)) last = m;
  return last && (last.index ?? 0) + last[0].length === end ? last[0] : undefined;
}

/** The continuation this line offers: the whole line when it is made only of URL characters and starts no new URL. */
export function continuationOf(visible: string): string | undefined {
  const line = visible.trimEnd();
  return URL_LINE.test(line) && URL_PIECE.test(line) && !SCHEME.test(line) ? line : undefined;
}

/** One stream's held prefix. */
export class LineJoin {
  private pending: JoinedUrl | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly onSettle: (joined: JoinedUrl) => void,
    private readonly settleMs = SETTLE_MS,
  ) {}

  /** A line's visible text; true when it was taken as a continuation (its own URLs are then not candidates). */
  feed(visible: string): boolean {
    const p = this.pending;
    if (!p) return false;
    const cont = continuationOf(visible);
    if (cont === undefined || p.lines >= MAX_JOIN_LINES || p.text.length + cont.length > MAX_JOINED_CHARS) {
      this.settle();
      return false;
    }
    this.pending = { ...p, text: p.text + cont, lines: p.lines + 1 };
    this.arm();
    return true;
  }

  hold(prefix: string, reason: string, repeat: boolean): void {
    this.settle();
    this.pending = { text: prefix, lines: 1, reason, repeat };
    this.arm();
  }

  /** Judge the held run now. */
  settle(): void {
    const p = this.pending;
    this.clear();
    if (p) this.onSettle(p);
  }

  /** Stop; the held run, if any, is handed back unjudged. */
  close(): JoinedUrl | undefined {
    const p = this.pending;
    this.clear();
    return p;
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.settle(), this.settleMs);
    this.timer.unref();
  }

  private clear(): void {
    this.pending = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
