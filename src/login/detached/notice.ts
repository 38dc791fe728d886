/**
 * The one-line reminder other commands print (stderr) when this state dir
 * has a login pending, e.g. after an SSH session dropped mid-login. Cheap:
 * one small file read (from a record dir checked as `login` checks it), no
 * socket, no cleanup.
 */

import { formatDuration } from '../../util/duration.js';
import { supervisorAlive } from './control.js';
import { isPending, readState, recordPaths } from './record.js';

export function pendingLoginNotice(env: NodeJS.ProcessEnv, stateDir: string): string | undefined {
  let state: ReturnType<typeof readState>;
  try {
    state = readState(recordPaths(env, stateDir));
  } catch {
    return undefined;
  }
  if (!state || !isPending(state) || !supervisorAlive(state)) return undefined;
  const left = formatDuration(Math.max(0, state.deadline - Date.now()));
  return `note: a login is pending for this state dir (${left} left${state.port ? `, port ${state.port}` : ''}); see \`agyctl login status\``;
}
