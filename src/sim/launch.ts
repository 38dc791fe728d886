// How the OAuth URL reaches the user. RC01 on a headless box prints nothing
// and only tries a browser; newer builds print a line; gemini-cli only runs
// xdg-open and only with a display. AGY_SIM_LAUNCH picks one behaviour.
import { spawn } from 'node:child_process';
import { type FileLaunchMode, ignoresSigterm, type LaunchMode } from './config.js';
import { type PageKind, pageReference, writePage } from './launch-file.js';

export const URL_LINE_PREFIX = 'Open the following link to authenticate the ACP server: ';

type Env = Record<string, string | undefined>;

/** Fire and forget: never wait for the browser, never report its failure (RC01 doesn't). */
function spawnDetachedQuietly(command: string, url: string, env: Env): void {
  try {
    const child = spawn(command, [url], { detached: false, stdio: 'ignore', env: env as NodeJS.ProcessEnv });
    child.on('error', () => {});
    child.unref();
  } catch {
    // e.g. an empty or invalid command: same as a missing browser
  }
}

function spawnArgsQuietly(command: string, args: string[], env: Env): void {
  try {
    const child = spawn(command, args, { detached: false, stdio: 'ignore', env: env as NodeJS.ProcessEnv });
    child.on('error', () => {});
    child.unref();
  } catch {
    // same as a missing program
  }
}

/**
 * BROWSER the way Python's webbrowser and Rust's webbrowser crate read it:
 * a colon-separated list tried in order, each entry a command whose `%s`
 * is replaced by the URL (appended when there is none), split on spaces.
 */
function browserList(url: string, env: Env): void {
  const entries = (env.BROWSER ?? '').split(':').filter((e) => e.trim() !== '');
  const tryEntry = (i: number): void => {
    const entry = entries[i];
    if (entry === undefined) return;
    const words = entry.trim().split(/\s+/);
    const args = entry.includes('%s') ? words.slice(1).map((w) => w.replace(/%s/g, url)) : [...words.slice(1), url];
    try {
      const child = spawn(words[0]!, args, { stdio: 'ignore', env: env as NodeJS.ProcessEnv });
      child.on('error', () => tryEntry(i + 1));
      child.on('exit', (code) => (code === 0 ? undefined : tryEntry(i + 1)));
      child.unref();
    } catch {
      tryEntry(i + 1);
    }
  };
  tryEntry(0);
}

/** BROWSER as a shell command template (`cmd %s`), as many scripts and `sh -c "$BROWSER '%s'"` launchers do. */
function browserTemplate(url: string, env: Env): void {
  const browser = env.BROWSER ?? '';
  if (browser === '') return;
  const quoted = `'${url.replace(/'/g, `'\\''`)}'`;
  const line = browser.includes('%s') ? browser.replace(/%s/g, quoted) : `${browser} ${quoted}`;
  spawnArgsQuietly('/bin/sh', ['-c', line], env);
}

/** A terminal hyperlink: the visible text says nothing, the URL is inside the escape sequence. */
export function osc8Line(url: string): string {
  return `\x1b]8;;${url}\x1b\\Sign in to Google\x1b]8;;\x1b\\`;
}

/** The URL cut in three by colour codes, one of them tput's sgr0 (ESC ( B ESC [ m), as coloured log lines do. */
export function colourSplitLine(url: string): string {
  const a = Math.floor(url.length / 3);
  const b = Math.floor((2 * url.length) / 3);
  return `\x1b[1;34mSign in:\x1b(B\x1b[m \x1b[4m${url.slice(0, a)}\x1b(B\x1b[m\x1b[4;36m${url.slice(a, b)}\x1b[0m\x1b[4m${url.slice(b)}\x1b(B\x1b[m`;
}

function openBrowser(url: string, env: Env, useBrowserVar: boolean): void {
  const browser = env.BROWSER;
  if (useBrowserVar && browser !== undefined && browser !== '') spawnDetachedQuietly(browser, url, env);
  else spawnDetachedQuietly('xdg-open', url, env);
}

export interface LaunchIo {
  /** Raw write onto the JSON-RPC channel (stdout). */
  writeStdoutLine(line: string): void;
  writeStderrLine(line: string): void;
  /** A piece of a stderr line, no newline added. */
  writeStderr(text: string): void;
}

/** Where a newer build's print path cuts the URL: the prefix on one line, the rest wrapped at a width. */
export const SPLIT_AT = 'https://accounts.google.com/o/oauth2/v2';
const WRAP_WIDTH = 64;
/** The pause between the two writes of one line: long enough that the reader sees two reads. */
const SPLIT_WRITE_PAUSE_MS = 50;

export function splitLines(url: string): string[] {
  const rest = url.startsWith(SPLIT_AT) ? url.slice(SPLIT_AT.length) : url;
  const head = url.startsWith(SPLIT_AT) ? SPLIT_AT : '';
  const wrapped = Array.from({ length: Math.ceil(rest.length / WRAP_WIDTH) }, (_, i) =>
    rest.slice(i * WRAP_WIDTH, (i + 1) * WRAP_WIDTH),
  );
  return [URL_LINE_PREFIX + head, ...wrapped];
}

/** The frame of a box drawn with Unicode box-drawing characters, or with ASCII. */
const BOX_FRAMES = {
  box: { top: ['╭', '─', '╮'], side: '│', bottom: ['╰', '─', '╯'] },
  'box-ascii': { top: ['+', '-', '+'], side: '|', bottom: ['+', '-', '+'] },
} as const;
const BOX_WIDTH = 60;
/** A help link above the sign-in URL: a URL of its own, ending its line, that must not be joined to the next. */
export const BOX_HELP_URL = 'https://antigravity.google/docs/acp';

/** The sign-in URL in a box, hard-wrapped at the box's inner width, with a help link on the line before it. */
export function boxLines(url: string, style: keyof typeof BOX_FRAMES): string[] {
  const f = BOX_FRAMES[style];
  const row = (text: string): string => `${f.side} ${text.padEnd(BOX_WIDTH)} ${f.side}`;
  const rule = ([l, m, r]: readonly string[]): string => `${l}${m!.repeat(BOX_WIDTH + 2)}${r}`;
  const pieces = Array.from({ length: Math.ceil(url.length / BOX_WIDTH) }, (_, i) =>
    url.slice(i * BOX_WIDTH, (i + 1) * BOX_WIDTH),
  );
  const body = ['Sign in to Antigravity', '', `Help: ${BOX_HELP_URL}`, ...pieces, ''];
  return [rule(f.top), ...body.map(row), rule(f.bottom)];
}

function splitWrite(url: string, io: LaunchIo): void {
  const line = URL_LINE_PREFIX + url;
  const cut = URL_LINE_PREFIX.length + Math.floor(url.length / 2);
  io.writeStderr(line.slice(0, cut));
  setTimeout(() => io.writeStderr(`${line.slice(cut)}\n`), SPLIT_WRITE_PAUSE_MS);
}

const PAGE_OF: Record<FileLaunchMode, { kind: PageKind; asUrl: boolean }> = {
  'html-file': { kind: 'html', asUrl: false },
  'html-file-url': { kind: 'html', asUrl: true },
  'desktop-file': { kind: 'desktop', asUrl: false },
  'url-file': { kind: 'url', asUrl: false },
};

/** The launcher of `default` (BROWSER, else xdg-open), handed the page instead of the URL. */
function openPage(mode: FileLaunchMode, url: string, env: Env): void {
  const { kind, asUrl } = PAGE_OF[mode];
  openBrowser(pageReference(writePage(kind, url, ignoresSigterm(env)), asUrl), env, true);
}

export function deliverUrl(mode: LaunchMode, url: string, env: Env, io: LaunchIo): void {
  switch (mode) {
    case 'default':
      openBrowser(url, env, true);
      return;
    case 'xdg-only':
      openBrowser(url, env, false);
      return;
    case 'display-only':
      // Without a display the URL is simply lost, as on real headless boxes.
      if ((env.DISPLAY ?? '') !== '' || (env.WAYLAND_DISPLAY ?? '') !== '') openBrowser(url, env, true);
      return;
    case 'stdout':
      io.writeStdoutLine(URL_LINE_PREFIX + url);
      return;
    case 'stderr':
      io.writeStderrLine(URL_LINE_PREFIX + url);
      return;
    case 'none':
      return;
    // --- URL capture area: how other builds and launcher libraries show the URL ---
    case 'gio':
      spawnArgsQuietly('gio', ['open', url], env);
      return;
    case 'kioclient':
      spawnArgsQuietly('kioclient', ['exec', url], env);
      return;
    case 'browser-template':
      browserTemplate(url, env);
      return;
    case 'browser-list':
      browserList(url, env);
      return;
    case 'osc8':
      io.writeStdoutLine(osc8Line(url));
      return;
    case 'colour-split':
      io.writeStderrLine(colourSplitLine(url));
      return;
    case 'split-lines':
      for (const l of splitLines(url)) io.writeStderrLine(l);
      return;
    case 'split-write':
      splitWrite(url, io);
      return;
    case 'box':
    case 'box-ascii':
      for (const l of boxLines(url, mode)) io.writeStderrLine(l);
      return;
    case 'html-file':
    case 'html-file-url':
    case 'desktop-file':
    case 'url-file':
      openPage(mode, url, env);
      return;
    case 'rpc-notification':
      io.writeStdoutLine(JSON.stringify({ jsonrpc: '2.0', method: '_vendor/auth_url', params: { url } }));
      return;
    case 'rpc-request':
      // An agent-to-client request the client does not know; its -32601 answer is ignored.
      io.writeStdoutLine(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'agy-sim-open-url',
          method: '_vendor/open_url',
          params: { target: { href: url } },
        }),
      );
      return;
    case 'meta-response':
      // A response to no request of the client's (id null), carrying the URL in _meta.
      io.writeStdoutLine(
        JSON.stringify({ jsonrpc: '2.0', id: null, result: { _meta: { 'vendor.example/signIn': { url } } } }),
      );
      return;
    case 'error-data':
      io.writeStdoutLine(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: 'Sign-in required', data: { authorizationUrl: url } },
        }),
      );
      return;
  }
}
