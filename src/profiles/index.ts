/**
 * Which server profile a run uses: --profile, else AGYCTL_PROFILE, else a
 * guess from the --server command's program name, else antigravity. Only
 * the first two are binding; a guess is corrected by what the server says
 * about itself in initialize (adoptDetectedProfile).
 */
import path from 'node:path';
import { usageError } from '../errors.js';
import { antigravity } from './antigravity.js';
import { geminiCli } from './gemini-cli.js';
import { PROFILE_IDS, type ProfileId, type ProfileSource, type ServerProfile } from './types.js';

export type { ProfileId, ProfileSource, ServerProfile } from './types.js';
export { PROFILE_IDS } from './types.js';

const PROFILES: Readonly<Record<ProfileId, ServerProfile>> = { antigravity, 'gemini-cli': geminiCli };

export function getProfile(id: ProfileId | undefined): ServerProfile {
  return PROFILES[id ?? 'antigravity'];
}

export function isProfileId(value: unknown): value is ProfileId {
  return typeof value === 'string' && (PROFILE_IDS as readonly string[]).includes(value);
}

function parseProfile(value: string, from: string): ProfileId {
  if (isProfileId(value)) return value;
  throw usageError(`${from} must be one of ${PROFILE_IDS.join(', ')} (got ${JSON.stringify(value)}).`, `pass --profile ${PROFILE_IDS.join(' or --profile ')}`);
}

/** The program a --server command line runs: its first word, quoted or not (a guess needs no full shell parse). */
function programName(commandLine: string | undefined): string | undefined {
  const m = /^\s*(?:"([^"]*)"|'([^']*)'|(\S+))/.exec(commandLine ?? '');
  const first = m ? (m[1] ?? m[2] ?? m[3]) : undefined;
  return first ? path.basename(first) : undefined;
}

/** A profile whose default command is this program (`gemini` -> gemini-cli). */
export function profileForProgram(program: string | undefined): ProfileId | undefined {
  if (!program) return undefined;
  for (const p of Object.values(PROFILES)) if (p.defaultCommands.some((c) => c.name === program)) return p.id;
  return undefined;
}

export function resolveProfile(flag: string | undefined, env: NodeJS.ProcessEnv, server: string | undefined): { id: ProfileId; source: ProfileSource } {
  if (flag !== undefined) return { id: parseProfile(flag, '--profile'), source: 'flag' };
  if (env.AGYCTL_PROFILE) return { id: parseProfile(env.AGYCTL_PROFILE, 'AGYCTL_PROFILE'), source: 'env' };
  const guessed = profileForProgram(programName(server));
  return guessed ? { id: guessed, source: 'server-command' } : { id: 'antigravity', source: 'default' };
}

/** The profile an initialize answer's agentInfo.name belongs to, if any. */
export function detectProfile(agentName: string | undefined | null): ProfileId | undefined {
  if (!agentName) return undefined;
  for (const p of Object.values(PROFILES)) if (p.agentNames.includes(agentName)) return p.id;
  return undefined;
}

/** The profile a command runs with (absent means antigravity). */
export const profileOf = (opts: { profile?: ProfileId | undefined }): ServerProfile => getProfile(opts.profile);
