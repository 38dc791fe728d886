/**
 * A captured sign-in URL as the `url` event that shows it (built here,
 * fields in the contract's order), and --open.
 */
import type { CommandIO } from '../core/io.js';
import { type AuthUrl, unexpectedClient } from '../profiles/auth-url.js';
import type { LoginEventOf, ShowLoginEvent } from './events.js';
import { type TunnelTarget, tunnelCommand } from './tunnel.js';

type UrlEvent = LoginEventOf<'url'>;

/** Where the URL was caught: the channel (shim, launcher-file, stdout, stderr, rpc, elicitation) and the launcher or message. */
export interface UrlOrigin {
  source: string;
  via: string | undefined;
  /** The agent's own words with an elicited URL (sanitised, redacted). */
  message?: string | undefined;
}

/** The auth method being signed in goes on the `url` event, so `login status` knows it before the sign-in ends. */
const methodField = (method: string | undefined) => (method ? { method } : {});
/** The channel the URL was caught on, and the launcher or message when known. */
const sourceFields = (origin: UrlOrigin) => ({ source: origin.source, ...(origin.via ? { via: origin.via } : {}) });
/** The agent's words go last: a person reads them, the NDJSON line has no field for them. */
const messageField = (origin: UrlOrigin | undefined) => (origin?.message ? { message: origin.message } : {});

/** A loopback sign-in URL and the tunnel that carries its redirect. */
export function loopbackUrlEvent(
  auth: AuthUrl,
  how: { target: TunnelTarget; method?: string | undefined },
  origin?: UrlOrigin,
): UrlEvent {
  return {
    event: 'url',
    url: auth.url,
    port: auth.port,
    redirectUri: auth.redirectUri,
    tunnel: tunnelCommand(auth.port, how.target),
    ...methodField(how.method),
    ...(origin ? sourceFields(origin) : {}),
    ...messageField(origin),
  };
}

/** A device-code or verification page: no tunnel and nothing to paste (the server follows it itself). */
export function devicePageEvent(auth: AuthUrl, method: string | undefined, origin: UrlOrigin): UrlEvent {
  const { url, redirectUri } = auth;
  return {
    event: 'url',
    mode: 'device',
    url,
    redirectUri,
    ...methodField(method),
    ...sourceFields(origin),
    ...messageField(origin),
  };
}

/** gemini-cli's code entry; `retry`: a new URL after a code the server could not use. */
export function codeEntryEvent(auth: AuthUrl, method: string | undefined, retry = false): UrlEvent {
  return {
    event: 'url',
    mode: 'code-entry',
    url: auth.url,
    redirectUri: auth.redirectUri,
    ...methodField(method),
    ...(retry ? { retry: true as const } : {}),
  };
}

/** The event with `unexpectedClient` set when its URL names a client or scopes the profile does not know (before the person-only fields). */
export function withClientCheck(event: UrlEvent, known: Parameters<typeof unexpectedClient>[1]): UrlEvent {
  const found = unexpectedClient(event.url, known);
  if (!found) return event;
  const { message, retry, ...line } = event;
  return {
    ...line,
    unexpectedClient: found,
    ...(message !== undefined ? { message } : {}),
    ...(retry ? { retry } : {}),
  };
}

/** --open: only when this shell has a display of its own (the server's DISPLAY may be our placeholder). */
export async function openInBrowser(io: CommandIO, url: string, show: ShowLoginEvent): Promise<boolean> {
  if (!io.ctx.env.DISPLAY && !io.ctx.env.WAYLAND_DISPLAY) {
    await show({ event: 'browser-not-opened' });
    return false;
  }
  try {
    const { default: open } = await import('open');
    const child = await open(url, { wait: false });
    child.unref();
    return true;
  } catch (err) {
    await show({ event: 'browser-not-opened', error: (err as Error).message });
    return false;
  }
}
