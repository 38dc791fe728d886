/**
 * Which server a use case works on: the state dir, the --server command and
 * the profile. The CLI builds one from the global options; a detected
 * profile yields a new one (profiles/adopt.ts), nothing mutates it.
 */

export const PROFILE_IDS = ['antigravity', 'gemini-cli'] as const;
export type ProfileId = (typeof PROFILE_IDS)[number];

/** How the profile in use was chosen, strongest first. */
export type ProfileSource = 'flag' | 'env' | 'server-command' | 'detected' | 'default';

export interface ServerTarget {
  stateDir: string;
  /** The raw --server / AGYCTL_SERVER command line, if any. */
  server: string | undefined;
  /** The server profile (--profile / AGYCTL_PROFILE, else guessed; see src/profiles). Absent means antigravity. */
  profile?: ProfileId;
  profileSource?: ProfileSource;
  /** --state-dir or AGYCTL_STATE_DIR was given: a detected profile must not move it. */
  stateDirExplicit?: boolean;
}
