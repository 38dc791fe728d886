/** How a captured sign-in URL is shown: plain lines that copy cleanly over SSH, or one NDJSON event. */
import type { CommandIO } from '../core/io.js';
import type { AuthUrl } from '../profiles/auth-url.js';
import { emit } from './detached/contract.js';
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

export function presentUrl(io: CommandIO, auth: AuthUrl, options: PresentOptions, origin?: UrlOrigin): string {
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
  if (!io.out.json) {
    const e = io.out.e;
    io.out.info(e.bold('Open this URL in a browser on your laptop:'));
    io.out.print(auth.url);
    io.out.info(e.bold('First run this on your laptop and leave it running:'));
    io.out.print(tunnel);
    io.out.info(tunnelExplanation(auth.port));
    io.out.info(
      `No tunnel? Sign in anyway; when the browser fails to load http://127.0.0.1:${auth.port}/..., copy that address and ${pasteWhere(options.detached)}.`,
    );
  }
  return tunnel;
}

export async function showQr(io: CommandIO, url: string): Promise<void> {
  const { default: qrcode } = await import('qrcode-terminal');
  await new Promise<void>((resolve) =>
    qrcode.generate(url, { small: true }, (art: string) => {
      io.out.info(art);
      resolve();
    }),
  );
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
