/**
 * A captured sign-in URL as the `url` event that shows it (built here,
 * fields in the contract's order), with the tunnel command; and --open.
 *
 * The tunnel command is the exact SSH command a user runs on their laptop.
 * It is pasted into a shell, so nothing from --ssh-target, $USER or
 * SSH_CONNECTION may reach it unquoted: hosts are host names or IP literals
 * only, user and host are POSIX-quoted when needed, and `--` ends ssh's
 * options.
 */
import os from 'node:os';
import type { CommandIO } from '../core/io.js';
import { type AuthUrl, unexpectedClient } from '../profiles/auth-url.js';
import { shellQuote } from '../util/shell-quote.js';
import type { LoginEventOf, ShowLoginEvent, TunnelTarget } from './events.js';

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

// --- the SSH tunnel that carries a loopback redirect ---

/** A host name or IPv4 address, not starting with '-' (ssh would read an option). */
const HOST_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
/** Inside brackets: IPv6 characters only, with an optional zone (%eth0). */
const IPV6 = /^[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?$/;
/** A user name for ssh: no '-' first, no whitespace or control characters (quoting handles the rest). */
const USER_NAME = /^[^-\s@\x00-\x1f\x7f][^\s@\x00-\x1f\x7f]*$/;

export function parseSshTarget(text: string): TunnelTarget | undefined {
  const m = /^(?:([^@\s]+)@)?(\[[^\]]*\]|[^:@\s]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) return undefined;
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  if (m[1] !== undefined && !USER_NAME.test(m[1])) return undefined;
  const raw = m[2]!;
  const host = raw.startsWith('[') ? raw.slice(1, -1) : raw;
  if (!(raw.startsWith('[') ? IPV6.test(host) : HOST_NAME.test(host))) return undefined;
  return { user: m[1], host, port };
}

export { shellQuote };

function currentUser(env: NodeJS.ProcessEnv): string | undefined {
  if (env.USER) return env.USER;
  if (env.LOGNAME) return env.LOGNAME;
  try {
    return os.userInfo().username;
  } catch {
    return undefined;
  }
}

/** --ssh-target, else the address this SSH session came in on (SSH_CONNECTION's third field), else the host name. */
export function defaultTunnelTarget(env: NodeJS.ProcessEnv, explicit?: TunnelTarget): TunnelTarget {
  if (explicit) return explicit;
  const found = currentUser(env);
  const user = found !== undefined && USER_NAME.test(found) ? found : undefined;
  const fields = (env.SSH_CONNECTION ?? '').trim().split(/\s+/);
  // The server address sshd reports is an IP literal; anything else is not trusted.
  if (fields.length === 4 && fields[2] && (IPV6.test(fields[2]) || /^[0-9.]+$/.test(fields[2]))) {
    const sshPort = Number(fields[3]);
    return { user, host: fields[2], port: sshPort && sshPort !== 22 ? sshPort : undefined };
  }
  return { user, host: os.hostname(), port: undefined };
}

export function tunnelCommand(callbackPort: number, target: TunnelTarget): string {
  const dest = shellQuote(target.user ? `${target.user}@${target.host}` : target.host);
  const port = target.port ? ` -p ${Number(target.port)}` : '';
  return `ssh -N -L ${callbackPort}:127.0.0.1:${callbackPort} -o ExitOnForwardFailure=yes${port} -- ${dest}`;
}
