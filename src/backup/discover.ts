/**
 * The conversations in a state dir, found from the file system alone: names,
 * sizes, mtimes, `.meta`, the SQLite header and /proc. The databases are
 * never opened here (never poll the server's databases).
 */
import fs from 'node:fs';
import path from 'node:path';
import { type AgyError, usageError } from '../core/errors.js';
import { CONVERSATION_FILE, conversationFiles, stateDirProblem, stateFiles } from '../core/paths.js';
import { lstatOrNull, readFileNoFollow } from '../util/os/safe-fs.js';
import { holders } from '../util/procfs.js';
import { errorText } from './error-text.js';
import { type FileIdentity, identityOf } from './file-identity.js';

/** discoverSessions found no conversations directory: the state dir is wrong (exit 2); the message says which part is missing. */
export const noConversationsDirectory = (stateDir: string): AgyError =>
  stateDirProblem(stateDir) ??
  usageError(
    `No conversations directory in ${stateDir}.`,
    'point --state-dir (or AGYCTL_STATE_DIR) at the server state dir, ~/.gemini/antigravity-acp by default',
  );

export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export interface SessionInfo {
  id: string;
  cwd: string | null;
  /** db + WAL, the space the conversation takes. */
  bytes: number;
  dbBytes: number;
  walBytes: number;
  /** Newest mtime of db and WAL (ISO), null when there is no database file. */
  modified: string | null;
  openBy: number[];
  /** Why this entry is broken or incomplete; null when it is fine. */
  problem: string | null;
  /** Whether backup can snapshot it. */
  readable: boolean;
  db: FileIdentity | null;
  wal: FileIdentity | null;
}

export function conversationsDir(stateDir: string): string {
  return stateFiles(stateDir).conversations;
}

/**
 * A fresh box: the state dir exists but the server has not made
 * conversations/ yet (it does at the first session). Not an error: there is
 * nothing to list or back up. A missing state dir still is (a wrong --state-dir).
 */
export function noConversationsYet(stateDir: string): boolean {
  return isDir(stateDir) && !fs.existsSync(conversationsDir(stateDir));
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Every conversation, newest first; undefined when the conversations directory does not exist.
 * `holders: false` leaves `openBy` empty: the /proc scan reads every fd of every process
 * (over 100 ms on a busy box), and backup does not need it.
 */
export function discoverSessions(stateDir: string, options: { holders?: boolean } = {}): SessionInfo[] | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(conversationsDir(stateDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const stems = new Set<string>();
  for (const name of names) {
    const m = CONVERSATION_FILE.exec(name);
    if (m) stems.add(m[1]!);
  }
  const sessions = [...stems].map((id) => describe(stateDir, id));
  if (options.holders !== false) attachHolders(stateDir, sessions);
  return sessions.sort(newestFirst);
}

function describe(stateDir: string, id: string): SessionInfo {
  const files = conversationFiles(stateDir, id);
  const problems: string[] = [];
  let db: FileIdentity | null = null;
  let wal: FileIdentity | null = null;
  let readable = false;
  // Links first: one that points where this user cannot look must still be named as a link, not as a missing file.
  const linked = linkedFiles(files);
  if (linked.length > 0)
    problems.push(
      `${linked.join(', ')} ${linked.length > 1 ? 'are symlinks' : 'is a symlink'}; agyctl does not follow links in the state dir (replace the link with the file)`,
    );
  try {
    db = identityOf(files.db);
    wal = identityOf(files.wal);
    readable = db !== null && linked.length === 0 && checkHeader(files.db, problems);
  } catch (err) {
    if (linked.length === 0) problems.push(`cannot stat: ${errorText(err)}`);
  }
  if (!SESSION_ID.test(id)) {
    problems.unshift('not named like a session id');
    readable = false;
  }
  if (db === null && problems.length === 0) problems.push(`no database file (only ${leftovers(files).join(', ')})`);
  const cwd = readMeta(files.meta, problems);
  const newest = Math.max(mtimeMs(db), mtimeMs(wal));
  return {
    id,
    cwd,
    bytes: (db?.size ?? 0) + (wal?.size ?? 0),
    dbBytes: db?.size ?? 0,
    walBytes: wal?.size ?? 0,
    modified: db === null ? null : new Date(newest).toISOString(),
    openBy: [],
    problem: problems.length > 0 ? problems.join('; ') : null,
    readable,
    db,
    wal,
  };
}

function checkHeader(file: string, problems: string[]): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const head = Buffer.alloc(SQLITE_HEADER.length);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    if (n === 0) return true; // empty file: SQLite reads it as an empty database
    if (n < head.length || !head.equals(SQLITE_HEADER)) {
      problems.push('not a SQLite database (bad header)');
      return false;
    }
    return true;
  } catch (err) {
    problems.push(`cannot read the database: ${errorText(err)}`);
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function readMeta(file: string, problems: string[]): string | null {
  let text: string;
  try {
    text = readFileNoFollow(file).toString('utf8');
  } catch (err) {
    problems.push(
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'no .meta file (cwd unknown)'
        : `cannot read .meta: ${errorText(err)}`,
    );
    return null;
  }
  try {
    const cwd = (JSON.parse(text) as { cwd?: unknown } | null)?.cwd;
    if (typeof cwd === 'string') return cwd;
    problems.push('.meta has no cwd');
  } catch {
    problems.push('.meta is not valid JSON');
  }
  return null;
}

/** Conversation files that are symlinks (a planted link must not steer a backup or restore out of the state dir). */
function linkedFiles(files: ReturnType<typeof conversationFiles>): string[] {
  return [files.db, files.wal, files.shm, files.meta]
    .filter((f) => lstatOrNull(f)?.isSymbolicLink())
    .map((f) => path.basename(f));
}

function leftovers(files: ReturnType<typeof conversationFiles>): string[] {
  return (['wal', 'shm', 'meta'] as const).filter((k) => fs.existsSync(files[k])).map((k) => path.basename(files[k]));
}

function attachHolders(stateDir: string, sessions: SessionInfo[]): void {
  const paths = sessions.flatMap((s) => {
    const f = conversationFiles(stateDir, s.id);
    return [f.db, f.wal];
  });
  const found = holders(paths);
  for (const s of sessions) {
    const f = conversationFiles(stateDir, s.id);
    s.openBy = [...new Set([...(found.get(f.db) ?? []), ...(found.get(f.wal) ?? [])])].sort((a, b) => a - b);
  }
}

function mtimeMs(id: FileIdentity | null): number {
  return id === null ? 0 : Number(BigInt(id.mtimeNs) / 1_000_000n);
}

export function newestMtimeMs(s: SessionInfo): number {
  return Math.max(mtimeMs(s.db), mtimeMs(s.wal));
}

function newestFirst(a: SessionInfo, b: SessionInfo): number {
  return newestMtimeMs(b) - newestMtimeMs(a) || a.id.localeCompare(b.id);
}

/** `agyctl sessions`: every conversation in the state dir, from the file system and /proc only. */
export interface SessionsReport {
  stateDir: string;
  sessions: Array<Omit<SessionInfo, 'db' | 'wal' | 'readable'>>;
}

export function listSessionsReport(stateDir: string): SessionsReport {
  if (noConversationsYet(stateDir)) return { stateDir, sessions: [] };
  const found = discoverSessions(stateDir);
  if (found === undefined) throw noConversationsDirectory(stateDir);
  return { stateDir, sessions: found.map(({ db: _db, wal: _wal, readable: _r, ...rest }) => rest) };
}
