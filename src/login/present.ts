/** How a captured sign-in URL is shown: plain lines that copy cleanly over SSH, or one NDJSON event. */
import type { CommandIO } from '../core/io.js';
import type { AuthUrl } from '../profiles/auth-url.js';
import { emit } from './detached/contract.js';
import { fitQr, qrLines, screenOf } from './qr.js';
import { type TunnelTarget, tunnelCommand, tunnelExplanation } from './tunnel.js';

export interface PresentOptions {
  target: TunnelTarget;
  qr: boolean;
  open: boolean;
  /** `login --detach`: this command returns, so a pasted address goes to `agyctl login finish`, not here. */
  detached?: boolean | undefined;
  /** The auth method being signed in (on the `url` event, so `login status` knows it before the sign-in ends). */
  method?: string | undefined;
  /** false when this command's stdin cannot bring a paste. */
  stdinPastes?: boolean | undefined;
}

/** Where a pasted address or code goes, and the method it signs in (for the `url` event). */
export type PasteTarget = Pick<PresentOptions, 'detached' | 'stdinPastes' | 'method'>;

/** Where a user without a tunnel gives the address (or the code) the browser ended on. */
export function pasteWhere(o: PasteTarget): string {
  if (o.detached) return 'give it to `agyctl login finish`';
  return o.stdinPastes === false ? 'give it to `agyctl login finish` in another shell' : 'paste it here';
}

/** Where the URL was caught: the channel (shim, launcher-file, stdout, stderr, rpc, elicitation) and the launcher or message. */
export interface UrlOrigin {
  source: string;
  via: string | undefined;
  /** The agent's own words with an elicited URL (sanitised, redacted). */
  message?: string | undefined;
}

/** An elicited URL is shown with its host and what the agent said about it, as the ACP specification asks of a client. */
function elicitedLines(auth: AuthUrl, origin: UrlOrigin | undefined): ShownLine[] {
  if (origin?.source !== 'elicitation') return [];
  const host = new URL(auth.url).hostname;
  const said = origin.message ? `: "${origin.message}"` : '';
  return [{ kind: 'info', text: `The server asks you to open a page on ${host} (ACP URL elicitation)${said}` }];
}

/** A line shown with the URL: data on stdout (print), a message on stderr (info, warn). */
export interface ShownLine {
  kind: 'print' | 'info' | 'warn';
  text: string;
}

/**
 * A value to copy, alone on its stdout line. With stdout piped (`login | tee`, a script keeping the URL)
 * and stderr on the terminal, it is shown there too, so its label never stands alone.
 */
function printValue(io: CommandIO, value: string): void {
  io.out.print(value);
  if (!io.out.stdoutIsTTY && io.out.stderrIsTTY) io.out.info(value, { verbatim: true });
}

/** A label for the person (stderr) and the value under it. */
export function labelled(io: CommandIO, label: string, value: string): void {
  io.out.info(label);
  printValue(io, value);
}

export async function presentUrl(
  io: CommandIO,
  auth: AuthUrl,
  options: PresentOptions,
  origin?: UrlOrigin,
): Promise<string> {
  const tunnel = tunnelCommand(auth.port, options.target);
  emit(io.out, {
    event: 'url',
    url: auth.url,
    port: auth.port,
    redirectUri: auth.redirectUri,
    tunnel,
    ...(options.method ? { method: options.method } : {}),
    ...(origin ? { source: origin.source, ...(origin.via ? { via: origin.via } : {}) } : {}),
  });
  if (origin) io.out.verbose(`sign-in URL caught on ${origin.source}${origin.via ? ` (${origin.via})` : ''}`);
  const e = io.out.e;
  await showUrlLines(io, auth.url, options.qr, [
    ...elicitedLines(auth, origin),
    { kind: 'info', text: e.bold('Open this URL in a browser on your laptop:') },
    { kind: 'print', text: auth.url },
    { kind: 'info', text: e.bold('First run this on your laptop and leave it running:') },
    { kind: 'print', text: tunnel },
    { kind: 'info', text: tunnelExplanation(auth.port) },
    {
      kind: 'info',
      text: `No tunnel? Sign in anyway; when the browser fails to load http://127.0.0.1:${auth.port}/..., copy that address and ${pasteWhere(options)}.`,
    },
  ]);
  return tunnel;
}

/** A device-code or verification page: shown as it is, with no tunnel and nothing to paste (the server follows it itself). */
export async function presentDevicePage(
  io: CommandIO,
  auth: AuthUrl,
  options: PresentOptions,
  origin: UrlOrigin,
): Promise<void> {
  emit(io.out, {
    event: 'url',
    mode: 'device',
    url: auth.url,
    redirectUri: auth.redirectUri,
    ...(options.method ? { method: options.method } : {}),
    source: origin.source,
    ...(origin.via ? { via: origin.via } : {}),
  });
  io.out.verbose(`sign-in page caught on ${origin.source}${origin.via ? ` (${origin.via})` : ''}`);
  await showUrlLines(io, auth.url, options.qr, [
    ...elicitedLines(auth, origin),
    { kind: 'info', text: io.out.e.bold('Open this page in a browser on your laptop and follow it:') },
    { kind: 'print', text: auth.url },
    {
      kind: 'info',
      text: 'No tunnel and nothing to paste: the server sees the sign-in finish by itself. Waiting for it...',
    },
  ]);
}

/**
 * The human lines that show a sign-in URL, with its QR code above them when
 * asked for and it fits (src/login/qr.ts), so the URL and the tunnel command
 * stay on screen under the code. --json prints none of them and never a code.
 */
export async function showUrlLines(
  io: CommandIO,
  url: string,
  qr: boolean,
  lines: readonly ShownLine[],
): Promise<void> {
  if (io.out.json) {
    if (qr) io.out.info('QR code left out: --json prints no QR code.');
    return;
  }
  if (qr) await showQr(io, url, lines);
  for (const line of lines) {
    if (line.kind === 'print') printValue(io, line.text);
    else if (line.kind === 'info') io.out.info(line.text);
    else io.out.warn(line.text);
  }
}

async function showQr(io: CommandIO, url: string, after: readonly ShownLine[]): Promise<void> {
  const code = await qrLines(url);
  // Output.warn puts this prefix before the text.
  const shown = after.map((l) => (l.kind === 'warn' ? `warning: ${l.text}` : l.text));
  const fit = fitQr(code, screenOf(io.ctx.stderr), shown);
  io.out.info(fit.draw ? code.join('\n') : fit.note, { verbatim: fit.draw });
}

/** --open: only when this shell has a display of its own (the server's DISPLAY may be our placeholder). */
export async function openInBrowser(io: CommandIO, url: string): Promise<boolean> {
  if (!io.ctx.env.DISPLAY && !io.ctx.env.WAYLAND_DISPLAY) {
    io.out.warn('--open: no display here (DISPLAY/WAYLAND_DISPLAY unset); open the URL on your laptop instead');
    return false;
  }
  try {
    const { default: open } = await import('open');
    const child = await open(url, { wait: false });
    child.unref();
    return true;
  } catch (err) {
    io.out.warn(`--open: could not start a browser (${(err as Error).message})`);
    return false;
  }
}
