/**
 * What launchers were given. The browser shims' log has one line per
 * launcher run, the program's name and its arguments separated by tabs (the
 * shim turns tabs and newlines inside an argument into spaces). `gio open
 * URL`, `kioclient exec URL`, a `BROWSER` run with `%s` left in, `xdg-open
 * --version`: every run is evidence, whether or not it carried a sign-in URL.
 *
 * Some launchers are handed not the sign-in URL but a local file leading to
 * it: the absolute path or `file://` URL of an HTML page with a meta
 * refresh, a link or a `location` assignment (notebook servers do this), or
 * of a `.desktop` or `.url` shortcut. The file is read once, bounded,
 * without following a link at its name (and only through directories root
 * or we own link to), and only a regular file; the URLs it holds go to the
 * pipeline like any other candidate. Its contents are never shown: only the
 * URLs found, redacted by the pipeline. A file that cannot be read or holds
 * no URL is a reason (evidence), never an error: the capture goes on
 * watching the other channels.
 */

import fs from 'node:fs';
import path from 'node:path';
import { PinnedDir } from '../../util/os/pinned-dir.js';
import { urlsInText } from './text-source.js';

export interface LauncherRun {
  program: string;
  args: string[];
}

export function parseLauncherLog(text: string): LauncherRun[] {
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const [program = '?', ...args] = l.split('\t');
      return { program, args };
    });
}

/** The URLs a launcher run was given, in argument order. */
export function launcherUrls(run: LauncherRun): string[] {
  return run.args.flatMap((a) => urlsInText(a));
}

/** Why a run carried no URL, in words a bug report can use. */
export function noUrlReason(run: LauncherRun): string {
  if (run.args.length === 0) return 'ran without arguments';
  if (run.args.some((a) => a.includes('%s'))) return 'got a literal %s (a BROWSER template nobody filled in), no URL';
  return 'got no URL among its arguments';
}

export type FileKind = 'html' | 'desktop' | 'url';

/** A page that only leads to a URL is a few hundred bytes; anything bigger is not one, and is not read at all. */
export const MAX_FILE_BYTES = 64 * 1024;
/** A capture reads at most this many files, so a server running launchers in a loop cannot keep it reading. */
export const MAX_FILES = 16;
/** At most this many URLs are taken from one file (a page full of links is no launcher page). */
export const MAX_URLS_PER_FILE = 8;

/** A kind in words, article included. */
export const FILE_KIND_WORDS: Record<FileKind, string> = {
  html: 'an HTML page',
  desktop: 'a .desktop file',
  url: 'a .url file',
};

/** What a launcher argument says about a local file: a path to read, or why it is not read. */
export type FileArgument = { path: string } | { refused: string };

/** A file's outcome: its kind when known, the URLs it holds, and why there are none. */
export interface FileReading {
  kind: FileKind | undefined;
  urls: string[];
  /** Set exactly when `urls` is empty. */
  reason?: string;
}

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
/** A name that says it is one of the files we read; without a leading `/` it is relative and refused, not guessed at. */
const LOCAL_FILE_NAME = /\.(?:html?|xhtml|desktop|url)$/i;
const FILE_URL = /^file:\/\/([^/?#]*)(\/[^?#]*)?(?:[?#].*)?$/i;

/** The file a launcher argument names, or undefined when it names none (a URL, a flag, a word). */
export function fileArgument(arg: string): FileArgument | undefined {
  if (/^file:/i.test(arg)) return fileUrlPath(arg);
  if (arg.startsWith('/')) return plainPath(arg);
  if (LOCAL_FILE_NAME.test(arg) && !SCHEME.test(arg))
    return { refused: 'a relative path: not read (only absolute paths and file:// URLs are)' };
  return undefined;
}

function fileUrlPath(arg: string): FileArgument {
  const m = FILE_URL.exec(arg);
  if (!m) return { refused: 'a file: URL that is not file:///absolute/path: not read' };
  const host = (m[1] ?? '').toLowerCase();
  // The host is server text; it is in the (redacted) arguments already, not repeated here.
  if (host !== '' && host !== 'localhost') return { refused: 'a file:// URL naming another host: not read' };
  try {
    return plainPath(decodeURIComponent(m[2] ?? '/'));
  } catch {
    return { refused: 'a file:// URL with a broken %-escape: not read' };
  }
}

/** An absolute path as the kernel would read it: no `.` or `..` to resolve (a link on the way would resolve them otherwise). */
function plainPath(p: string): FileArgument {
  if (p.includes('\0')) return { refused: 'a path with a NUL byte: not read' };
  if (p.endsWith('/')) return { refused: 'not read: a directory' };
  const parts = p.split('/').filter((s) => s !== '');
  if (parts.some((s) => s === '.' || s === '..')) return { refused: 'a path with . or .. in it: not read' };
  return { path: `/${parts.join('/')}` };
}

/** The files of one capture: each path read once, at most MAX_FILES of them. */
export class LauncherFiles {
  private readonly seen = new Set<string>();

  /** The reading of `file`, or undefined when this capture already read it. */
  read(file: string): FileReading | undefined {
    if (this.seen.has(file)) return undefined;
    const full = this.seen.size >= MAX_FILES;
    this.seen.add(file);
    if (full)
      return { kind: kindByName(file), urls: [], reason: `not read: this capture already read ${MAX_FILES} files` };
    return readLauncherFile(file);
  }
}

/** Read and parse one file (the reading never throws). */
export function readLauncherFile(file: string): FileReading {
  const read = readBounded(file);
  if ('reason' in read) return { kind: kindByName(file), urls: [], reason: read.reason };
  const kind = fileKind(file, read.text);
  if (kind === undefined) return { kind, urls: [], reason: 'not an HTML page, .desktop or .url file: not parsed' };
  const urls = urlsInFile(kind, read.text);
  return urls.length > 0 ? { kind, urls } : { kind, urls, reason: NO_URL[kind] };
}

const NO_URL: Record<FileKind, string> = {
  html: 'no URL in it (no meta refresh, link or location assignment)',
  desktop: 'no URL in it (no URL= or Exec= with a URL in [Desktop Entry])',
  url: 'no URL in it (no URL= in [InternetShortcut])',
};

// --- reading ---

/** The file's text, or why it was not read: a regular file only, reached without following a link at its name, at most MAX_FILE_BYTES. */
function readBounded(file: string): { text: string } | { reason: string } {
  let dir: PinnedDir;
  try {
    dir = PinnedDir.open(path.dirname(file));
  } catch (err) {
    return { reason: `not read: its directory ${errorWords(err)}` };
  }
  try {
    // Through the held directory: lstat and O_NOFOLLOW see the name itself, never a link's target.
    const at = dir.at(path.basename(file));
    const before = refusal(fs.lstatSync(at));
    if (before) return { reason: `not read: ${before}` };
    const fd = fs.openSync(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    try {
      // What was opened decides (the name may have been swapped since the lstat).
      const after = refusal(fs.fstatSync(fd));
      if (after) return { reason: `not read: ${after}` };
      const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
      let n = 0;
      for (let got = -1; got !== 0 && n < buf.length; n += got) got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (n > MAX_FILE_BYTES) return { reason: `not read: ${tooBig('it grew while read')}` };
      return { text: buf.toString('utf8', 0, n).replace(/^\uFEFF/, '') };
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    return { reason: `not read: ${errorWords(err)}` };
  } finally {
    dir.close();
  }
}

/** Why this is not a file we read; undefined for a regular file within the bound. */
function refusal(st: fs.Stats): string | undefined {
  if (st.isSymbolicLink()) return 'a symbolic link (not followed)';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a directory';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (!st.isFile()) return 'not a regular file';
  if (st.size > MAX_FILE_BYTES) return tooBig(`${st.size} bytes`);
  return undefined;
}

const tooBig = (size: string): string =>
  `too big (${size}, over the ${MAX_FILE_BYTES / 1024} KiB bound; a page that only leads to a URL is far smaller)`;

const ERRNO_WORDS: Record<string, string> = {
  ENOENT: 'does not exist',
  EACCES: 'permission denied',
  EPERM: 'not permitted (a link swapped in on the way?)',
  ELOOP: 'is a symbolic link (not followed)',
  ENOTDIR: 'a path component is not a directory',
  ENAMETOOLONG: 'name too long',
};

function errorWords(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'unsafe-symlink') return 'is reached through a link another user owns (not followed)';
  return typeof code === 'string' ? (ERRNO_WORDS[code] ?? code) : 'could not be read';
}

// --- kinds ---

function kindByName(file: string): FileKind | undefined {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.desktop') return 'desktop';
  if (ext === '.url') return 'url';
  if (ext === '.html' || ext === '.htm' || ext === '.xhtml') return 'html';
  return undefined;
}

/** By content first (an ini group header, HTML markup), then by name: launchers' temp files often have neither extension. */
export function fileKind(file: string, text: string): FileKind | undefined {
  const headers = iniLines(text).filter((l) => l.startsWith('['));
  // A desktop entry starts with its group; a .url file may have a [DEFAULT] group before [InternetShortcut].
  if (headers[0] === '[Desktop Entry]') return 'desktop';
  if (headers.some((h) => h.toLowerCase() === '[internetshortcut]')) return 'url';
  if (/<(?:!doctype\s+html|html|head|body|meta|a|script)[\s>/]/i.test(text)) return 'html';
  return kindByName(file);
}

/** The URLs a file of this kind leads to, in the order a browser would go: the redirect first, then links. */
export function urlsInFile(kind: FileKind, text: string): string[] {
  const found = kind === 'html' ? htmlUrls(text) : kind === 'desktop' ? desktopUrls(text) : shortcutUrls(text);
  return [...new Set(found.map((u) => u.trim()).filter((u) => u !== '' && !u.startsWith('#')))].slice(
    0,
    MAX_URLS_PER_FILE,
  );
}

// --- HTML ---

const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
// A tag's attributes stop at the next '<' (quoted values too), so a hostile page cannot make the scan quadratic.
const TAG = /<(meta|a)\b((?:[^<>"']|"[^"<]*"|'[^'<]*')*)>/gi;
const ATTR = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>`]+)))?/g;
const SCRIPT = /<script\b[^<>]*>([\s\S]*?)(?:<\/script\s*>|$)/gi;
const JS_STRING = String.raw`(["'])((?:\\.|(?!\1)[^\\\r\n])*)\1`;
const LOCATION_SET = new RegExp(String.raw`\blocation(?:\.href)?\s*=\s*${JS_STRING}`, 'g');
const LOCATION_CALL = new RegExp(String.raw`\blocation\.(?:replace|assign)\(\s*${JS_STRING}\s*\)`, 'g');
/** `0; url=...`, `0;URL='...'`, `5, ...`: the delay, then the address, maybe quoted. */
const REFRESH = /^\s*[0-9.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$/is;

function htmlUrls(html: string): string[] {
  const text = html.replace(COMMENT, '');
  const refresh: string[] = [];
  const links: string[] = [];
  for (const m of text.matchAll(TAG)) {
    const attrs = attributes(m[2] ?? '');
    if (m[1]!.toLowerCase() === 'meta') {
      if (attrs.get('http-equiv')?.trim().toLowerCase() === 'refresh')
        refresh.push(refreshUrl(attrs.get('content') ?? ''));
    } else if (attrs.has('href')) links.push(attrs.get('href')!);
  }
  const scripts = [...text.matchAll(SCRIPT)].map((m) => m[1] ?? '');
  const located = scripts.flatMap((s) =>
    [...s.matchAll(LOCATION_SET), ...s.matchAll(LOCATION_CALL)]
      .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      .map((m) => jsUnescape(m[2] ?? '')),
  );
  return [...refresh, ...located, ...links];
}

/** A tag's attributes, names lowercased, values entity-decoded; the first of a repeated name counts (as in a browser). */
function attributes(source: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of source.matchAll(ATTR)) {
    const name = m[1]!.toLowerCase();
    if (!out.has(name)) out.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return out;
}

function refreshUrl(content: string): string {
  const rest = (REFRESH.exec(content)?.[1] ?? '').trim();
  const quoted = /^(["'])(.*?)(?:\1|$)/s.exec(rest);
  return quoted ? (quoted[2] ?? '') : rest;
}

/** The entities an attribute value may carry: numeric ones and the few named ones a URL needs. */
const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  sol: '/',
  colon: ':',
  quest: '?',
  equals: '=',
  num: '#',
  percnt: '%',
  plus: '+',
  comma: ',',
  semi: ';',
  period: '.',
  lowbar: '_',
  excl: '!',
  commat: '@',
  lpar: '(',
  rpar: ')',
  tilde: '~',
};

export function decodeEntities(value: string): string {
  return value.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g,
    (whole, dec, hex, name) => {
      if (name !== undefined) return NAMED_ENTITIES[name as string] ?? whole;
      return codePoint(dec !== undefined ? Number.parseInt(dec as string, 10) : Number.parseInt(hex as string, 16));
    },
  );
}

/** As HTML: NUL, surrogates and values past Unicode become U+FFFD. */
function codePoint(n: number): string {
  return n === 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) ? '\ufffd' : String.fromCodePoint(n);
}

function jsUnescape(s: string): string {
  return s.replace(/\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([\s\S]))/g, (_, u, x, c) =>
    u !== undefined || x !== undefined ? codePoint(Number.parseInt((u ?? x) as string, 16)) : (c as string),
  );
}

// --- .desktop and .url (ini-style) ---

/** Lines without comments and blanks, trimmed. */
function iniLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'));
}

/** The `key=value` pairs of the first group called `group` (keys as written). */
function iniGroup(text: string, group: (header: string) => boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let inside = false;
  let done = false;
  for (const line of iniLines(text)) {
    if (line.startsWith('[')) {
      if (inside) done = true;
      inside = !done && group(line);
      continue;
    }
    const eq = line.indexOf('=');
    if (inside && eq > 0) out.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return out;
}

/** The desktop entry spec's string escapes. */
function desktopUnescape(value: string): string {
  const map: Record<string, string> = { s: ' ', n: '\n', t: '\t', r: '\r', '\\': '\\' };
  return value.replace(/\\([sntr\\])/g, (_, c: string) => map[c] ?? c);
}

function desktopUrls(text: string): string[] {
  const entry = iniGroup(text, (h) => h === '[Desktop Entry]');
  const urls = entry.filter(([k]) => k === 'URL').map(([, v]) => desktopUnescape(v));
  // Exec: a command line; `%%` is a literal % (the URL's own escapes), other field codes are not URLs.
  const execs = entry
    .filter(([k]) => k === 'Exec')
    .flatMap(([, v]) =>
      urlsInText(
        desktopUnescape(v)
          .replace(/\\(["`$\\])/g, '$1')
          .replace(/%%/g, '%'),
      ),
    );
  return [...urls, ...execs];
}

function shortcutUrls(text: string): string[] {
  return iniGroup(text, (h) => h.toLowerCase() === '[internetshortcut]')
    .filter(([k]) => k.toLowerCase() === 'url')
    .map(([, v]) => v);
}
