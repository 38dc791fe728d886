// On-disk layout of the server's state directory. Like the real server, the
// location derives from $HOME, so tests point HOME at a temp dir.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ConversationNaming, MetaShape } from './config.js';

export interface StatePaths {
  stateDir: string;
  settings: string;
  token: string;
  conversations: string;
  /** `.db` on RC01; `.sqlite` with AGY_SIM_CONVERSATION_NAMING=sqlite. */
  dbSuffix: string;
  /** What a new conversation's .meta holds (AGY_SIM_META_SHAPE). */
  metaShape: MetaShape;
  /** AGY_SIM_TOKEN_STORE=ssh-aware in the keyring without D-Bus: a token write is silently lost. */
  tokenWriteFails?: boolean;
}

/** AGY_SIM_TOKEN_STORE=keyring keeps the token here, outside the state dir, like builds that use the OS keyring. */
export const KEYRING_DIR = join('.local', 'share', 'agy-sim-keyring');

export function statePaths(
  env: Record<string, string | undefined>,
  tokenStore: 'file' | 'keyring' = 'file',
  naming: ConversationNaming = 'rc01',
  metaShape: MetaShape = 'rc01',
): StatePaths {
  const home = env.HOME && env.HOME !== '' ? env.HOME : homedir();
  const stateDir = join(home, '.gemini', 'antigravity-acp');
  return {
    stateDir,
    settings: join(stateDir, 'settings.json'),
    token: tokenStore === 'keyring' ? join(home, KEYRING_DIR, 'token.json') : join(stateDir, 'acp_token.json'),
    conversations: join(stateDir, 'conversations'),
    dbSuffix: naming === 'sqlite' ? '.sqlite' : '.db',
    metaShape,
  };
}

/** Session ids are server-chosen UUIDs; anything else never maps to a file (no path tricks). */
export function isSessionId(v: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
}

export function conversationDb(paths: StatePaths, sessionId: string): string {
  return join(paths.conversations, `${sessionId}${paths.dbSuffix}`);
}

export function conversationMeta(paths: StatePaths, sessionId: string): string {
  return join(paths.conversations, `${sessionId}.meta`);
}

/** Where the server keeps a session's artifacts (the /plan flow writes its plan here; reference, /plan command flow). */
export function brainDir(paths: StatePaths, sessionId: string): string {
  return join(paths.stateDir, 'brain', sessionId);
}
