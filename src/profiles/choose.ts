/**
 * Which server profile a run uses: --profile, else AGYCTL_PROFILE, else a
 * guess from the --server command's program name, else antigravity. Only
 * the first two are binding; a guess is corrected by what the server says
 * about itself in initialize (adopt.ts). Kept apart from the profile
 * objects: every command start loads this (through the global options), so
 * it imports nothing that is not loaded already.
 */
import path from 'node:path';
import { usageError } from '../core/errors.js';
import { PROFILE_IDS, type ProfileId, type ProfileSource } from '../core/io.js';
import { defaultStateDir } from '../core/paths.js';
import { geminiCliStateDir } from './gemini-cli-paths.js';

export { PROFILE_IDS, type ProfileId, type ProfileSource };

/** Program names that identify a profile (each profile's defaultCommands; a unit test keeps them in step). */
export const PROGRAM_PROFILES: Readonly<Record<string, ProfileId>> = {
  agy_acp_server: 'antigravity',
  'agy_acp_server.par': 'antigravity',
  'antigravity-acp': 'antigravity',
  gemini: 'gemini-cli',
};

export function isProfileId(value: unknown): value is ProfileId {
  return typeof value === 'string' && (PROFILE_IDS as readonly string[]).includes(value);
}

function parseProfile(value: string, from: string): ProfileId {
  if (isProfileId(value)) return value;
  throw usageError(
    `${from} must be one of ${PROFILE_IDS.join(', ')} (got ${JSON.stringify(value)}).`,
    `pass --profile ${PROFILE_IDS.join(' or --profile ')}`,
  );
}

/** The program a --server command line runs: its first word, quoted or not (a guess needs no full shell parse). */
function programName(commandLine: string | undefined): string | undefined {
  const m = /^\s*(?:"([^"]*)"|'([^']*)'|(\S+))/.exec(commandLine ?? '');
  const first = m ? (m[1] ?? m[2] ?? m[3]) : undefined;
  return first ? path.basename(first) : undefined;
}

export function resolveProfile(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  server: string | undefined,
): { id: ProfileId; source: ProfileSource } {
  if (flag !== undefined) return { id: parseProfile(flag, '--profile'), source: 'flag' };
  if (env.AGYCTL_PROFILE) return { id: parseProfile(env.AGYCTL_PROFILE, 'AGYCTL_PROFILE'), source: 'env' };
  const program = programName(server);
  const guessed =
    program !== undefined && Object.hasOwn(PROGRAM_PROFILES, program) ? PROGRAM_PROFILES[program] : undefined;
  return guessed ? { id: guessed, source: 'server-command' } : { id: 'antigravity', source: 'default' };
}

/** Each profile's defaultStateDir, without loading the profile objects (a unit test keeps them in step). */
const DEFAULT_STATE_DIRS: Readonly<Record<ProfileId, (env: NodeJS.ProcessEnv) => string>> = {
  antigravity: defaultStateDir,
  'gemini-cli': geminiCliStateDir,
};

export function defaultStateDirFor(id: ProfileId): (env: NodeJS.ProcessEnv) => string {
  return DEFAULT_STATE_DIRS[id];
}
