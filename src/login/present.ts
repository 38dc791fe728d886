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
  detached?: boolean;
}

/** Where a user without a tunnel gives the address (or the code) the browser ended on. */
export function pasteWhere(detached: boolean | undefined): string {
  return detached ? 'give it to `agyctl login finish`' : 'paste it here';
}

/** Where the URL was caught: the channel (shim, stdout, stderr, rpc) and the launcher or message. */
export interface UrlOrigin {
  source: string;
  via: string | undefined;
}

/** A line shown with the URL: data on stdout (print), a message on stderr (info, warn). */
export interface ShownLine {
  kind: 'print' | 'info' | 'warn';
  text: string;
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
    ...(origin ? { source: origin.source, ...(origin.via ? { via: origin.via } : {}) } : {}),
  });
  if (origin) io.out.verbose(`sign-in URL caught on ${origin.source}${origin.via ? ` (${origin.via})` : ''}`);
  const e = io.out.e;
  await showUrlLines(io, auth.url, options.qr, [
    { kind: 'info', text: e.bold('Open this URL in a browser on your laptop:') },
    { kind: 'print', text: auth.url },
    { kind: 'info', text: e.bold('First run this on your laptop and leave it running:') },
    { kind: 'print', text: tunnel },
    { kind: 'info', text: tunnelExplanation(auth.port) },
    {
      kind: 'info',
      text: `No tunnel? Sign in anyway; when the browser fails to load http://127.0.0.1:${auth.port}/..., copy that address and ${pasteWhere(options.detached)}.`,
    },
  ]);
  return tunnel;
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
    if (line.kind === 'print') io.out.print(line.text);
    else if (line.kind === 'info') io.out.info(line.text);
    else io.out.warn(line.text);
  }
}

async function showQr(io: CommandIO, url: string, after: readonly ShownLine[]): Promise<void> {
  const code = await qrLines(url);
  // Output.warn puts this prefix before the text.
  const shown = after.map((l) => (l.kind === 'warn' ? `warning: ${l.text}` : l.text));
  const fit = fitQr(code, screenOf(io.ctx.stderr), shown);
  io.out.info(fit.draw ? code.join('\n') : fit.note);
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
