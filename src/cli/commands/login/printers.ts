/**
 * How a login is shown: the events its use cases emit (src/login/events.ts),
 * rendered by one text printer or one --json printer behind one interface.
 * Each printer is a table with one entry per event name, so an event nobody
 * renders does not compile. Every event of the contract goes to the output's
 * event channel in both modes, as its NDJSON line: only --json prints it,
 * and a supervisor's output forwards every one to its clients. Warnings and
 * notes for a person go to stderr in both modes; the URL lines, the QR code
 * (drawn only where it fits the terminal: at the end of this file) and the
 * progress sentences only in text mode.
 */
import path from 'node:path';
import type { TtyWritable } from '../../../core/io.js';
import type { EventPrinter } from '../../../login/client.js';
import {
  isPublicLoginEvent,
  type LoginEvent,
  type LoginEventName,
  type LoginEventOf,
  type PublicLoginEvent,
} from '../../../login/events.js';
import { describePending, type LoginState, terminalLine } from '../../../login/record.js';
import type { UnexpectedClient } from '../../../profiles/auth-url.js';
import { stripAnsi } from '../../../util/terminal-text.js';
import type { Output } from '../../terminal/output.js';
import { printValue } from '../../terminal/output.js';
import { serverNoteText } from '../../terminal/server-notes.js';

/** What the login's text shows besides the events, decided by whoever knows how the login runs. */
export interface LoginDisplay {
  qr: boolean;
  /** Where a user without a tunnel gives the address or code (`pasteWhere`). */
  pasteWhere: string;
  /** The terminal a QR code is fitted to. */
  stderr: TtyWritable;
}

export const ALREADY_ARRIVED =
  'The sign-in already arrived, so there is nothing to deliver: the login is checking the credentials now.';

/** Where a user without a tunnel gives the address (or the code) the browser ended on. */
export function pasteWhere(how: { detached?: boolean | undefined; stdinPastes?: boolean | undefined }): string {
  if (how.detached) return 'give it to `agyctl login finish`';
  return how.stdinPastes === false ? 'give it to `agyctl login finish` in another shell' : 'paste it here';
}

/** One renderer per event name: leaving one out is a type error. */
type Renderers = { readonly [N in LoginEventName]: (e: LoginEventOf<N>) => void | Promise<void> };

/** Events whose only words are --verbose detail. */
const VERBOSE_ONLY: ReadonlySet<LoginEventName> = new Set<LoginEventName>([
  'server-started',
  'redirect-delivered',
  'code-sent',
  'auth-status',
  'sign-in-window',
  'stale-login-dir-removed',
  'sign-in-before-initialize',
  'redirect-path-differs',
  'page-step-ended',
]);

/** The login's printer: its events as they come, rendered for this terminal. */
export function loginPrinter(out: Output, display: LoginDisplay): EventPrinter {
  const render = out.json ? jsonRenderers(out, display) : textRenderers(out, display);
  const verboseOnly = (e: LoginEvent): boolean =>
    VERBOSE_ONLY.has(e.event) ||
    (e.event === 'said' && e.how === 'verbose') ||
    (e.event === 'server-note' && serverNoteText(e.note).how === 'verbose') ||
    (e.event === 'url-rejected' && !(e.loud && e.url) && !out.json);
  return {
    writes: (e) =>
      (out.json && isPublicLoginEvent(e)) || (render[e.event] !== none && (out.options.verbose || !verboseOnly(e))),
    show(e) {
      if (isPublicLoginEvent(e)) out.event(jsonLine(e)); // printed only with --json; a supervisor forwards it
      return (render[e.event] as (e: LoginEvent) => void | Promise<void>)(e);
    },
  };
}

/** The fields a person is told besides an NDJSON line (events.ts marks them "person only"). */
const PERSON_FIELDS = ['message', 'retry', 'text', 'pushedWith', 'key', 'expected', 'devicePage'] as const;

/** An event of the contract as its NDJSON line: its own fields, in their order. */
export function jsonLine(e: PublicLoginEvent): Record<string, unknown> {
  const line: Record<string, unknown> = { ...e };
  for (const field of PERSON_FIELDS) delete line[field];
  return line;
}

/** A line shown with the URL: data on stdout (print), a message on stderr (info, warn). */
interface ShownLine {
  kind: 'print' | 'info' | 'warn';
  text: string;
}

/** The warning for a URL naming another OAuth client or more scopes than the server's known ones. */
export function unexpectedClientWarning(u: UnexpectedClient, what: string): string {
  const asks = [
    ...(u.clientId !== undefined ? [`the OAuth client ${u.clientId}`] : []),
    ...(u.scopes ? [`the scope(s) ${u.scopes.join(' ')}`] : []),
  ];
  return `this ${what} names ${asks.join(' and ')}, which this server's known sign-in does not use: check on Google's consent page which app asks for what before you allow it`;
}

const none = (): void => undefined;

/** What the URL event tells a person in both modes: where it was caught (--verbose) and an unexpected client. */
function urlNotes(out: Output, e: LoginEventOf<'url'>): void {
  const what = e.mode === 'device' ? 'sign-in page' : 'sign-in URL';
  if (e.source !== undefined) out.verbose(`${what} caught on ${e.source}${e.via ? ` (${e.via})` : ''}`);
  if (e.unexpectedClient) out.warn(unexpectedClientWarning(e.unexpectedClient, what));
}

/** The events rendered alike with and without --json: notes on stderr, --verbose details, or nothing. */
function inBothModes(out: Output) {
  return {
    waiting: none,
    'profile-detected': none,
    verified: none,
    restarted: none,
    'server-started': (e) => out.verbose(`server ${e.pid} initialized in ${e.ms} ms`),
    'redirect-delivered': (e) => out.verbose(`delivered the redirect to the login listener (HTTP ${e.status})`),
    'code-sent': () => out.verbose('sent the code to the server'),
    'url-withdrawn': (e) =>
      out.warn(
        `the server withdrew the sign-in URL (elicitation ${e.elicitationId}): do not open it any more; waiting up to ${e.graceS}s for the server's answer to the sign-in`,
      ),
    'auth-status'(e) {
      if (e.pushedWith) out.verbose(`the server pushed its auth status (${e.pushedWith}): ${e.state}`);
      out.verbose(`the server says: ${e.state}${e.account ? ` (${accountText(e.account)})` : ''}`);
    },
    'settings-changed'(e) {
      const key = e.key ?? 'auth.type';
      if (e.by === 'agyctl') {
        out.info(
          `settings.json had no ${key}; wrote ${key} = ${String(e.authTypeAfter)} so the server finds these credentials after a restart`,
        );
        return;
      }
      const note = `the server changed settings.json during the login (${key} ${String(e.authTypeBefore ?? 'unset')} -> ${String(e.authTypeAfter ?? 'unset')})`;
      // gemini-cli records the method it just used by design; elsewhere a rewrite may have replaced the user's choice.
      if (e.expected) out.info(note);
      else out.warn(note);
    },
    'method-mismatch'(e) {
      const advice = e.canSetAuth ? ` (agyctl settings set-auth ${e.requested})` : '';
      out.warn(
        `settings.json says ${e.key} ${e.configured}, but you asked for --method ${e.requested}; the server will use ${e.configured} after a restart unless you change it${advice}`,
      );
    },
    'sign-in-window': (e) =>
      out.verbose(`${e.title} gives up on a sign-in after ${e.minutes} minutes, whatever --timeout says`),
    'stale-login-dir-removed': (e) => out.verbose(`removed ${e.dir}, left by a login that was killed`),
    'sign-in-before-initialize': () =>
      out.verbose(
        'the server started a sign-in before answering initialize (its settings name an OAuth type, but it has no usable credentials)',
      ),
    'redirect-path-differs': (e) =>
      out.verbose(`the redirect path ${e.path} is not the ${e.profile} profile's ${e.expected}; using the server's`),
    'page-step-ended': () =>
      out.verbose('the server says the page step ended (elicitation/complete); waiting for its authenticate answer'),
    'browser-not-opened': (e) =>
      out.warn(
        e.error === undefined
          ? '--open: no display here (DISPLAY/WAYLAND_DISPLAY unset); open the URL on your laptop instead'
          : `--open: could not start a browser (${e.error})`,
      ),
    'token-file-missing': (e) =>
      out.info(
        `the server reported success but ${e.path} does not exist (some builds keep credentials elsewhere, e.g. the OS keyring); the proof below decides whether a restart keeps the login`,
      ),
    'token-file-narrowed': (e) => out.warn(`${e.path} had mode ${e.from}; narrowed it to 0600 (it is a credential)`),
    'auth-type-differs'(e) {
      const current = String(e.current);
      const advice = e.canSetAuth ? ` (change it with: agyctl settings set-auth ${e.method})` : '';
      out.warn(
        `settings.json names ${e.key} ${current}, not ${e.method}; left unchanged. The server will use ${current} after a restart${advice}`,
      );
    },
    'credentials-elsewhere': (e) =>
      out.info(
        `note: no ${path.basename(e.tokenFile)}; the server holds credentials elsewhere, e.g. the OS keyring (a fresh server accepted them without authenticate)`,
      ),
    'server-note': (e) => out.server(e.note),
    said(e) {
      if (e.how === 'print') out.print(e.text, { verbatim: e.verbatim === true });
      else if (e.how === 'info') out.info(e.text, { verbatim: e.verbatim === true });
      else out[e.how](e.text);
    },
    'previous-died': (e) => out.warn(`the previous login's supervisor (pid ${e.pid}) had died; cleaned up after it`),
    'already-arrived': () => out.info(ALREADY_ARRIVED),
    undelivered: () => out.warn('could not reach the login supervisor to deliver that'),
  } satisfies Partial<Renderers>;
}

/** --json: the NDJSON lines (written before these) and, on stderr, only what a person is told in both modes. */
function jsonRenderers(out: Output, display: LoginDisplay): Renderers {
  return {
    ...inBothModes(out),
    url(e) {
      urlNotes(out, e);
      if (display.qr) out.info('QR code left out: --json prints no QR code.');
    },
    'url-rejected': none,
    'no-url-yet': none,
    'redirect-rejected': none,
    'code-rejected': none,
    authenticated: none,
    detached: none,
    'logged-in': none,
    pending: none,
    restarting: none,
    cancelling: none,
  };
}

/** Text: the notes, the URL's lines (and QR code), and the progress sentences. */
function textRenderers(out: Output, display: LoginDisplay): Renderers {
  return {
    ...inBothModes(out),
    async url(e) {
      urlNotes(out, e);
      await showUrl(out, display, e);
    },
    'url-rejected'(e) {
      const text = e.text ?? e.reason;
      if (e.loud && e.url) out.warn(`ignoring ${text}`);
      else out.verbose(text);
    },
    'no-url-yet': (e) =>
      out.warn(
        `the server has not shown a sign-in URL after ${e.afterS}s; if this build only opens a browser when DISPLAY is set, do not pass --no-fake-display (run with --verbose to see its output)`,
      ),
    'redirect-rejected': (e) => out.warn(`not delivered: ${e.reason}`),
    'code-rejected': (e) => out.warn(`not sent: ${e.reason}`),
    authenticated: (e) =>
      out.info(out.e.green(`Signed in (${e.method}). Checking that a fresh server accepts the credentials...`)),
    detached(e) {
      out.info(`The login goes on in the background (supervisor pid ${e.pid}) until ${e.deadline}.`);
      out.info(
        e.devicePage
          ? 'Follow the page; the server sees the sign-in finish by itself. Then `agyctl login status --wait`. Stop it with `agyctl login cancel`.'
          : 'After signing in: `agyctl login finish` with the address your browser ended on (not needed when the tunnel carried it), then `agyctl login status --wait`. Stop it with `agyctl login cancel`.',
      );
    },
    'logged-in': (e) => loggedIn(out, e),
    pending(e) {
      for (const line of describePending(e.state).slice(1)) out.info(line);
    },
    restarting: (e) => out.info(`Cancelling the pending login (supervisor pid ${e.pid}) to start over...`),
    cancelling: () => out.info('Cancelling the login...'),
  };
}

function loggedIn(out: Output, e: LoginEventOf<'logged-in'>): void {
  out.print(`Logged in with ${e.method}; a fresh server accepted the credentials (start-up ${e.serverStartMs} ms).`);
  if (e.account) out.print(`Signed in as ${accountText(e.account)}.`);
  if (e.tokenFile) out.print(`Token file: ${e.tokenFile.path} (mode ${e.tokenFile.mode}; contents never shown).`);
  if (e.keptProbeSession !== undefined) out.print(`Probe session kept: ${e.keptProbeSession}`);
}

/** The URL's lines, each value to copy alone on its stdout line, with its QR code above them when asked for and it fits. */
async function showUrl(out: Output, display: LoginDisplay, e: LoginEventOf<'url'>): Promise<void> {
  const lines = [...elicitedLines(e), ...urlLines(out, display, e)];
  if (display.qr) await showQr(out, display, e.url, lines);
  for (const line of lines) {
    if (line.kind === 'print') printValue(out, line.text);
    else if (line.kind === 'info') out.info(line.text);
    else out.warn(line.text);
  }
}

function urlLines(out: Output, display: LoginDisplay, e: LoginEventOf<'url'>): ShownLine[] {
  const bold = out.e.bold;
  if (e.mode === 'device')
    return [
      { kind: 'info', text: bold('Open this page in a browser on your laptop and follow it:') },
      { kind: 'print', text: e.url },
      {
        kind: 'info',
        text: 'No tunnel and nothing to paste: the server sees the sign-in finish by itself. Waiting for it...',
      },
    ];
  if (e.mode === 'code-entry')
    return [
      ...(e.retry
        ? [
            {
              kind: 'warn' as const,
              text: 'the server could not use that code and started over: sign in again with this new URL',
            },
          ]
        : []),
      { kind: 'info', text: bold('Open this URL in any browser (this server uses code entry: no SSH tunnel needed):') },
      { kind: 'print', text: e.url },
      { kind: 'info', text: `After you sign in, Google shows an authorization code: ${display.pasteWhere}.` },
    ];
  return [
    { kind: 'info', text: bold('Open this URL in a browser on your laptop:') },
    { kind: 'print', text: e.url },
    { kind: 'info', text: bold('First run this on your laptop and leave it running:') },
    { kind: 'print', text: e.tunnel ?? '' },
    { kind: 'info', text: tunnelExplanation(e.port ?? 0) },
    {
      kind: 'info',
      text: `No tunnel? Sign in anyway; when the browser fails to load http://127.0.0.1:${e.port}/..., copy that address and ${display.pasteWhere}.`,
    },
  ];
}

/** Why the laptop's end of the tunnel must use the server's port. */
function tunnelExplanation(port: number): string {
  return `Port ${port} must be free on your laptop: Google sends the browser back to http://127.0.0.1:${port}/, so the laptop's end of the tunnel has to use the same port number as the server's listener.`;
}

async function showQr(out: Output, display: LoginDisplay, url: string, after: readonly ShownLine[]): Promise<void> {
  const code = await qrLines(url);
  // Output.warn puts this prefix before the text.
  const shown = after.map((l) => (l.kind === 'warn' ? `warning: ${l.text}` : l.text));
  const fit = fitQr(code, screenOf(display.stderr), shown);
  out.info(fit.draw ? code.join('\n') : fit.note, { verbatim: fit.draw });
}

/** An account for a person: its label and email, as the server (or gemini-cli's record) gave them, already sanitised. */
export function accountText(a: { label: string; email: string | null }): string {
  const label = terminalLine(a.label);
  return a.email ? `${label} <${terminalLine(a.email)}>` : label;
}

/** An elicited URL is shown with its host and what the agent said about it, as the ACP specification asks of a client. */
function elicitedLines(e: LoginEventOf<'url'>): ShownLine[] {
  if (e.source !== 'elicitation') return [];
  const host = new URL(e.url).hostname;
  // The server's words, quoted as such: only the URL above was checked.
  const said = e.message ? `; its own words, not checked by agyctl: "${e.message}"` : '';
  return [{ kind: 'info', text: `The server asks you to open a page on ${host} (ACP URL elicitation)${said}` }];
}

/** The `detached` event of a login that goes on under its supervisor. */
export function detachedEvent(s: LoginState): LoginEventOf<'detached'> {
  return {
    event: 'detached',
    id: s.id,
    pid: s.pid,
    url: s.url ?? null,
    port: s.port ?? null,
    tunnel: s.tunnel ?? null,
    deadline: new Date(s.deadline).toISOString(),
    ...(s.mode === 'device' ? { devicePage: true } : {}),
  };
}

// --- `login --qr`: whether the QR code of a sign-in URL fits the terminal it is
// drawn on. A sign-in URL is long, so even the half-block code (one column
// and half a row per module) is some 90 columns by 45 rows; a wrapped line
// makes it unscannable, and a code taller than the screen pushes the URL and
// the tunnel command (drawn under it) out of sight. So it is drawn only when
// it fits together with those lines, and is otherwise replaced by one note.

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
