/** The profiles by id, and detection from initialize. Choosing one (resolveProfile) is in choose.ts. */
import { antigravity } from './antigravity.js';
import { geminiCli } from './gemini-cli.js';
import type { ProfileId, ServerProfile } from './types.js';

export { PROFILE_IDS } from '../core/io.js';
export type { ProfileId, ProfileSource, ServerProfile } from './types.js';

const PROFILES: Readonly<Record<ProfileId, ServerProfile>> = { antigravity, 'gemini-cli': geminiCli };

export function getProfile(id: ProfileId | undefined): ServerProfile {
  return PROFILES[id ?? 'antigravity'];
}

/** The profile an initialize answer's agentInfo.name belongs to, if any. */
export function detectProfile(agentName: string | undefined | null): ProfileId | undefined {
  if (!agentName) return undefined;
  for (const p of Object.values(PROFILES)) if (p.agentNames.includes(agentName)) return p.id;
  return undefined;
}

/** The profile a command runs with (absent means antigravity). */
export const profileOf = (opts: { profile?: ProfileId | undefined }): ServerProfile => getProfile(opts.profile);
