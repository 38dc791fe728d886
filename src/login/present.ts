/**
 * A captured sign-in URL as the step that shows it (its `url` event built
 * here, fields in the contract's order).
 */
import type { CommandIO } from '../core/io.js';
import { type AuthUrl, unexpectedClient } from '../profiles/auth-url.js';
import type { LoginStep, UrlOrigin } from './steps.js';
import { type TunnelTarget, tunnelCommand } from './tunnel.js';

type UrlStep = Extract<LoginStep, { step: 'url' }>;

/** The auth method being signed in goes on the `url` event, so `login status` knows it before the sign-in ends. */
const methodField = (method: string | undefined) => (method ? { method } : {});
/** The channel the URL was caught on, and the launcher or message when known. */
const sourceFields = (origin: UrlOrigin) => ({ source: origin.source, ...(origin.via ? { via: origin.via } : {}) });

/** A loopback sign-in URL and the tunnel that carries its redirect. */
export function loopbackUrlStep(
  auth: AuthUrl,
  how: { target: TunnelTarget; method?: string | undefined },
  origin?: UrlOrigin,
): UrlStep {
  const event = {
    event: 'url',
    url: auth.url,
    port: auth.port,
    redirectUri: auth.redirectUri,
    tunnel: tunnelCommand(auth.port, how.target),
    ...methodField(how.method),
    ...(origin ? sourceFields(origin) : {}),
  } as const;
  return { step: 'url', event, ...(origin ? { origin } : {}) };
}

/** A device-code or verification page: no tunnel and nothing to paste (the server follows it itself). */
export function devicePageStep(auth: AuthUrl, method: string | undefined, origin: UrlOrigin): UrlStep {
  const { url, redirectUri } = auth;
  const event = {
    event: 'url',
    mode: 'device',
    url,
    redirectUri,
    ...methodField(method),
    ...sourceFields(origin),
  } as const;
  return { step: 'url', event, origin };
}

/** gemini-cli's code entry; `retry`: a new URL after a code the server could not use. */
export function codeEntryStep(auth: AuthUrl, method: string | undefined, retry = false): UrlStep {
  const event = {
    event: 'url',
    mode: 'code-entry',
    url: auth.url,
    redirectUri: auth.redirectUri,
    ...methodField(method),
  } as const;
  return { step: 'url', event, ...(retry ? { retry } : {}) };
}

/** The step with `unexpectedClient` set when its URL names a client or scopes the profile does not know. */
export function withClientCheck(step: UrlStep, known: Parameters<typeof unexpectedClient>[1]): UrlStep {
  const found = unexpectedClient(step.event.url, known);
  return found ? { ...step, event: { ...step.event, unexpectedClient: found } } : step;
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
