/**
 * Every filesystem location agyctl knows about. Nothing else calls
 * os.homedir(): tests and users move everything by HOME, XDG_* or
 * --state-dir, and this is the one place that decides how.
 *
 * A conversation's files under conversations/ have RC01's names (the
 * reference's on-disk table): `<id>.db`, `<id>.db-wal`, `<id>.db-shm`,
 * `<id>.meta`. A build that names them otherwise must not be backed up as
 * "nothing" in silence, so the entries that fit none of them are named in a
 * note (docs/assumptions.md).
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { usageError } from './errors.js';
import { childPath, showUntrusted } from './safe-path.js';

type Env = NodeJS.ProcessEnv;

/**
 * HOME, else (unset) the account's home from the password database. An
 * empty or relative HOME is refused: joined into a path it would silently
 * mean the current directory (settings written into cwd).
 */
export function homeDir(env: Env): string {
  const home = env.HOME === undefined ? os.homedir() : env.HOME;
  if (home && path.isAbsolute(home)) return home;
  throw usageError(
    `HOME is ${home ? `not an absolute path (${JSON.stringify(home)})` : 'empty'}, so agyctl cannot tell where the state dir and backups are.`,
    'set HOME to your home directory, or pass --state-dir DIR (and --to DIR for backup)',
  );
}

/** The server derives its state dir from HOME: `$HOME/.gemini/antigravity-acp`. */
export const STATE_SUBDIR = path.join('.gemini', 'antigravity-acp');

export function defaultStateDir(env: Env): string {
  return path.join(homeDir(env), STATE_SUBDIR);
}

export function resolveStateDir(
  flag: string | undefined,
  env: Env,
  cwd: string,
  fallback: (env: Env) => string = defaultStateDir,
): string {
  const chosen = flag ?? env.AGYCTL_STATE_DIR;
  return chosen ? path.resolve(cwd, expandTilde(chosen, env)) : fallback(env);
}

export function expandTilde(p: string, env: Env): string {
  if (p === '~') return homeDir(env);
  if (p.startsWith('~/')) return path.join(homeDir(env), p.slice(2));
  return p;
}

/**
 * The server has no flag for its state dir; it uses HOME. When the chosen
 * state dir has the server's shape (`<home>/.gemini/antigravity-acp`) we can
 * steer the server there by giving it that HOME. Otherwise undefined: the
 * server will use its own default, and callers warn about the mismatch.
 */
export function serverHomeFor(stateDir: string): string | undefined {
  const normal = path.resolve(stateDir);
  const suffix = path.sep + STATE_SUBDIR;
  return normal.endsWith(suffix) ? normal.slice(0, -suffix.length) || path.sep : undefined;
}

export const stateFiles = (stateDir: string) => ({
  settings: path.join(stateDir, 'settings.json'),
  token: path.join(stateDir, 'acp_token.json'),
  conversations: path.join(stateDir, 'conversations'),
});

/** The files of one conversation; each is checked to be a plain name inside conversations/ (ids come from outside). */
export function conversationFiles(stateDir: string, sessionId: string) {
  const dir = path.join(stateDir, 'conversations');
  const file = (suffix: string): string => childPath(dir, `${sessionId}${suffix}`);
  return { db: file('.db'), wal: file('.db-wal'), shm: file('.db-shm'), meta: file('.meta') };
}

/** Where backups go by default: $XDG_STATE_HOME/agyctl/backups, else ~/.local/state/agyctl/backups. */
export function defaultBackupDir(env: Env): string {
  const xdg = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : undefined;
  return path.join(xdg ?? path.join(homeDir(env), '.local', 'state'), 'agyctl', 'backups');
}

/** Private temporary directories (URL-capture shims, probe cwd) live under the OS temp dir. */
export function tempRoot(env: Env): string {
  return env.TMPDIR && env.TMPDIR.length > 0 ? env.TMPDIR : os.tmpdir();
}

/** `<stem>.<kind>`; the stem is checked to be a session id by the caller. */
export const CONVERSATION_FILE = /^(.+)\.(db|db-wal|db-shm|meta)$/;

/** Entries of `dir` that are not named like a conversation's files, sorted; empty when `dir` cannot be read. */
export function unrecognisedEntries(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((name) => !CONVERSATION_FILE.test(name))
      .sort();
  } catch {
    return [];
  }
}

/** One line naming a few of them (file names are untrusted text). */
export function describeUnrecognised(names: readonly string[]): string {
  const shown = names.slice(0, 3).map((n) => showUntrusted(n));
  const more = names.length > 3 ? ` and ${names.length - 3} more` : '';
  const one = names.length === 1;
  return `${names.length} ${one ? 'entry' : 'entries'} in conversations/ ${one ? 'is' : 'are'} not named like a conversation's files (<id>.db, .db-wal, .db-shm, .meta): ${shown.join(', ')}${more}; agyctl does not back ${one ? 'it' : 'them'} up (does this server build name its files differently? see docs/assumptions.md)`;
}
