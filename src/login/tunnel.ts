/**
 * The exact SSH tunnel command a user runs on their laptop. It is pasted
 * into a shell, so nothing from --ssh-target, $USER or SSH_CONNECTION may
 * reach it unquoted: hosts are host names or IP literals only, user and
 * host are POSIX-quoted when needed, and `--` ends ssh's options.
 */
import os from 'node:os';
import { shellQuote } from '../util/shell-quote.js';

export interface TunnelTarget {
  user: string | undefined;
  host: string;
  port: number | undefined;
}

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

export function tunnelExplanation(port: number): string {
  return `Port ${port} must be free on your laptop: Google sends the browser back to http://127.0.0.1:${port}/, so the laptop's end of the tunnel has to use the same port number as the server's listener.`;
}
