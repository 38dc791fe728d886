/** The server command for a profile: --server as given, else the profile's program names on PATH (src/acp/resolve.ts does the work). */
import { resolveCommand, type ServerCommand } from '../acp/resolve.js';
import { antigravity } from './antigravity.js';
import type { ServerProfile } from './types.js';

export function resolveServerCommand(
  commandLine: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  profile: ServerProfile = antigravity,
): ServerCommand {
  return resolveCommand(commandLine, env, cwd, profile);
}
