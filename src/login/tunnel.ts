/** The exact SSH tunnel command a user runs on their laptop. */
import os from 'node:os';

export interface TunnelTarget {
  user: string | undefined;
  host: string;
  port: number | undefined;
}

export function parseSshTarget(text: string): TunnelTarget | undefined {
  const m = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:@\s]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) return undefined;
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { user: m[1], host: m[2]!.replace(/^\[|\]$/g, ''), port };
}

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
  const user = currentUser(env);
  const fields = (env.SSH_CONNECTION ?? '').trim().split(/\s+/);
  if (fields.length === 4 && fields[2]) {
    const sshPort = Number(fields[3]);
    return { user, host: fields[2], port: sshPort && sshPort !== 22 ? sshPort : undefined };
  }
  return { user, host: os.hostname(), port: undefined };
}

export function tunnelCommand(callbackPort: number, target: TunnelTarget): string {
  const dest = target.user ? `${target.user}@${target.host}` : target.host;
  const port = target.port ? ` -p ${target.port}` : '';
  return `ssh -N -L ${callbackPort}:127.0.0.1:${callbackPort} -o ExitOnForwardFailure=yes${port} ${dest}`;
}

export function tunnelExplanation(port: number): string {
  return `Port ${port} must be free on your laptop: Google sends the browser back to http://127.0.0.1:${port}/, so the laptop's end of the tunnel has to use the same port number as the server's listener.`;
}
