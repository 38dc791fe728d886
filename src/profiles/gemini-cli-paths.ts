/**
 * Where gemini-cli keeps its state. Apart from the profile object because
 * choosing a profile (choose.ts, loaded by every command) needs the default
 * state dir and nothing else.
 */
import path from 'node:path';
import { homeDir } from '../core/paths.js';

/**
 * gemini-cli keeps everything in `<home>/.gemini`, where home is
 * GEMINI_CLI_HOME when set (its own override), else HOME.
 */
export const GEMINI_CLI_SUBDIR = '.gemini';

export function geminiCliStateDir(env: NodeJS.ProcessEnv): string {
  const home = env.GEMINI_CLI_HOME && env.GEMINI_CLI_HOME.length > 0 ? env.GEMINI_CLI_HOME : homeDir(env);
  return path.join(home, GEMINI_CLI_SUBDIR);
}

/** The GEMINI_CLI_HOME that makes gemini-cli use this state dir, when it has the `<home>/.gemini` shape. */
export function geminiCliHomeFor(stateDir: string): string | undefined {
  const normal = path.resolve(stateDir);
  return path.basename(normal) === GEMINI_CLI_SUBDIR ? path.dirname(normal) : undefined;
}

export const geminiCliFiles = (stateDir: string) => ({
  settings: path.join(stateDir, 'settings.json'),
  token: path.join(stateDir, 'oauth_creds.json'),
  accounts: path.join(stateDir, 'google_accounts.json'),
  projects: path.join(stateDir, 'projects.json'),
  /** Per-project scratch dirs: tmp/<project>/chats/session-*.jsonl are its conversations. */
  tmp: path.join(stateDir, 'tmp'),
  history: path.join(stateDir, 'history'),
});
