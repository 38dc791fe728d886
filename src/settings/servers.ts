/**
 * The server reads settings.json once, at startup: after a change, every
 * server already running against this state dir must be restarted. We only
 * name them; stopping a user's server is their call.
 */
import { findServersFor, readEnviron } from '../util/procfs.js';
import { type AuthType, envIsSet, neededEnv } from './auth-types.js';

export interface ServerProcess {
  pid: number;
  command: string;
  /** For each variable the auth type needs: set in that process's environment? (undefined: unreadable) */
  env: Array<{ name: string; set: boolean | undefined }>;
}

export function runningServers(stateDir: string, type: AuthType | undefined): ServerProcess[] {
  return findServersFor(stateDir).map((p) => {
    const environ = readEnviron(p.pid);
    const names = type ? neededEnv(type).map((n) => n.name) : [];
    return {
      pid: p.pid,
      command: p.argv.slice(0, 3).join(' '),
      env: names.map((name) => ({ name, set: environ ? envIsSet(environ, name) : undefined })),
    };
  });
}

/** The sentence after a change: which pids to restart, or that the next start picks it up. */
export function restartNotice(servers: readonly ServerProcess[]): string {
  if (servers.length === 0)
    return 'No server is running for this state directory; the next server start will use the new settings.';
  const pids = servers.map((s) => s.pid).join(', ');
  const one = servers.length === 1;
  return `${one ? 'A server is' : `${servers.length} servers are`} running for this state directory and read settings.json only at startup: restart ${one ? 'it' : 'each'} to pick up the change (pid ${pids}).`;
}
