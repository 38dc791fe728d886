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
import { AgyError, EXIT, usageError } from './errors.js';
import { childPath, showUntrusted } from './safe-path.js';

/**
 * HOME, else (unset) the account's home from the password database. An
 * empty or relative HOME is refused: joined into a path it would silently
 * mean the current directory (settings written into cwd).
 */
export function homeDir(env: NodeJS.ProcessEnv): string {
  const home = env.HOME === undefined ? os.homedir() : env.HOME;
  const fix = 'set HOME to your home directory, or pass --state-dir DIR (and --to DIR for backup)';
  if (!home || !path.isAbsolute(home))
    throw usageError(
      `HOME is ${home ? `not an absolute path (${JSON.stringify(home)})` : 'empty'}, so agyctl cannot tell where the state dir and backups are.`,
      fix,
    );
  // A mistyped HOME must not become a new home (mkdir -p of the state dir under it), nor a file be blamed on the user.
  const problem = homeProblem(home);
  if (problem)
    throw usageError(
      `HOME ${showUntrusted(home, 4096)} ${problem}, so agyctl will not put the state dir under it.`,
      fix,
    );
  return home;
}

/** Why HOME cannot hold the state dir: missing or not a directory; undefined when fine or when it cannot be told (EACCES). */
function homeProblem(home: string): string | undefined {
  try {
    return fs.statSync(home).isDirectory() ? undefined : 'is not a directory';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'does not exist';
    if (code === 'ENOTDIR') return 'is not a directory (a part of its path is a file)';
    return undefined;
  }
}

/** The server derives its state dir from HOME: `$HOME/.gemini/antigravity-acp`. */
export const STATE_SUBDIR = path.join('.gemini', 'antigravity-acp');

export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  return path.join(homeDir(env), STATE_SUBDIR);
}

export function resolveStateDir(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  fallback: (env: NodeJS.ProcessEnv) => string = defaultStateDir,
): string {
  const chosen = flag ?? env.AGYCTL_STATE_DIR;
  return chosen ? path.resolve(cwd, expandTilde(chosen, env)) : fallback(env);
}

/** A path option as given (`--opt=~/x` gets no tilde expansion from the shell): `~` and `~/…` are HOME, a relative path is from cwd. */
export function resolveUserPath(cwd: string, p: string, env: NodeJS.ProcessEnv): string {
  return path.resolve(cwd, expandTilde(p, env));
}

export function expandTilde(p: string, env: NodeJS.ProcessEnv): string {
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

const STATE_DIR_FIX =
  'point --state-dir (or AGYCTL_STATE_DIR) at the server state dir, ~/.gemini/antigravity-acp by default';

/**
 * One answer, for every command that reads a state dir, to a state dir that
 * cannot be one: missing (usage) or not a directory (fs-not-a-directory),
 * both exit 2 (docs/exit-codes.md). Undefined when it is a directory.
 */
export function stateDirProblem(stateDir: string): AgyError | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(stateDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return usageError(`The state dir ${showUntrusted(stateDir, 4096)} does not exist.`, STATE_DIR_FIX);
    if (code !== 'ENOTDIR') return undefined;
    return notADirectory(stateDir);
  }
  return st.isDirectory() ? undefined : notADirectory(stateDir);
}

const notADirectory = (stateDir: string): AgyError =>
  new AgyError(EXIT.usage, 'fs-not-a-directory', `The state dir ${showUntrusted(stateDir, 4096)} is not a directory.`, {
    hint: STATE_DIR_FIX,
    details: { path: stateDir, errno: 'ENOTDIR' },
  });

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
export function defaultBackupDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : undefined;
  return path.join(xdg ?? path.join(homeDir(env), '.local', 'state'), 'agyctl', 'backups');
}

/** Private temporary directories (URL-capture shims, probe cwd) live under the OS temp dir. */
export function tempRoot(env: NodeJS.ProcessEnv): string {
  return env.TMPDIR && env.TMPDIR.length > 0 ? env.TMPDIR : os.tmpdir();
}

/** `<stem>.<kind>`; the stem is checked to be a session id by the caller. */
export const CONVERSATION_FILE = /^(.+)\.(db|db-wal|db-shm|meta)$/;

/** restore's safety copy of a conversation's database (and its raw `-wal`, for a database SQLite could not read). */
export const PRE_RESTORE_FILE =
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.db\.pre-restore-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z)(-wal)?$/i;

/** What agyctl itself leaves in conversations/: restore's safety copies, its private work dirs and staged files. */
const AGYCTL_OWN_FILE = (name: string): boolean => PRE_RESTORE_FILE.test(name) || name.startsWith('.agyctl-');

/**
 * Entries of `dir` that are not named like a conversation's files nor like agyctl's own, sorted; empty when
 * `dir` cannot be read.
 */
export function unrecognisedEntries(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((name) => !CONVERSATION_FILE.test(name) && !AGYCTL_OWN_FILE(name))
      .sort();
  } catch {
    return [];
  }
}

/** One line naming a few of them (file names are untrusted text). */
export function describeUnrecognised(names: readonly string[]): string {
  // Whole names (up to NAME_MAX): the part that tells what a file is often comes last.
  const shown = names.slice(0, 3).map((n) => showUntrusted(n, 255));
  const more = names.length > 3 ? ` and ${names.length - 3} more` : '';
  const one = names.length === 1;
  return `${names.length} ${one ? 'entry' : 'entries'} in conversations/ ${one ? 'is' : 'are'} not named like a conversation's files (<id>.db, .db-wal, .db-shm, .meta): ${shown.join(', ')}${more}; agyctl does not back ${one ? 'it' : 'them'} up (does this server build name its files differently? see docs/assumptions.md)`;
}
