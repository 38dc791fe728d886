/**
 * Putting one conversation back. The server must be stopped: renaming a
 * snapshot over a live database with its old `-wal` corrupts it, and
 * deleting the sidecars loses the server's next commits.
 *
 * Order: exclusive-lock probe (held until the swap), safety VACUUM INTO of the
 * current database, snapshot copied to a temporary file in a private
 * directory and turned into WAL mode, checked and fsynced; only then the old
 * `-wal` and `-shm` go, the copy is renamed into place and the directory
 * fsynced. Any failure before the rename leaves the previous files as they
 * were. Conversation files that are symlinks are refused; what restore
 * creates is 0600. As root in another user's state dir, restore runs as that
 * user (cli/as-owner.ts), so everything it creates is theirs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { conversationFiles, PRE_RESTORE_FILE } from '../core/paths.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { PinnedDir } from '../util/os/pinned-dir.js';
import {
  assertNotSymlink,
  copyFileNoFollow,
  finishFile,
  holdsOpen,
  lstatOrNull,
  makePrivateDir,
  readFileNoFollow,
  rmPrivateDir,
  SwappedError,
} from '../util/os/safe-fs.js';
import { snapshotName } from './layout.js';
import type { ManifestSession } from './manifest.js';
import { type Db, holdsSnapshotContent, integrityCheck, isBusy, openReadWrite, type SnapshotDbFile } from './sqlite.js';

/** A process is writing the database: refused even with --force. */
export class LockedError extends Error {}
/** Another connection has the database open: refused unless --force. */
export class OpenElsewhereError extends Error {}

export interface RestoreOneOptions {
  stateDir: string;
  snapshotDir: string;
  session: ManifestSession;
  /** Called after the lock probe is released, right before the swap: throws if a process opened the database meanwhile. */
  recheck: () => void;
  force: boolean;
}

export interface RestoreOneResult {
  preRestore: string | null;
  /** The database there held the snapshot's content already: no safety copy was made. */
  unchanged: boolean;
}

/** Safety copies kept per conversation (docs/backup.md): older `<id>.db.pre-restore-*` go after a restore makes a new one. */
export const PRE_RESTORE_KEEP = 3;

const PROBE_TIMEOUT_MS = 1000;

/**
 * Where a restore works. `conv` is conversations/, held open (PinnedDir):
 * every step in it goes through its descriptor, so renaming it (or a
 * directory above it) away and putting a link in its place redirects
 * nothing. SQLite works in `work`, a private dir of ours inside it.
 */
interface Place {
  conv: PinnedDir;
  work: string;
  /** The conversation's files (their paths; every step goes through `conv`). */
  files: ReturnType<typeof conversationFiles>;
}

export function restoreOne(opts: RestoreOneOptions): RestoreOneResult {
  const files = conversationFiles(opts.stateDir, opts.session.id);
  assertConversationNotLinked(files);
  const conv = PinnedDir.open(path.dirname(files.db));
  try {
    // Temporary copies live in a fresh 0700 directory of ours: nothing planted beside the database can redirect them.
    const work = makePrivateDir(conv.path, 'restore');
    try {
      return restoreIn({ conv, work, files }, opts);
    } finally {
      rmPrivateDir(work);
    }
  } finally {
    conv.close();
  }
}

function restoreIn(place: Place, opts: RestoreOneOptions): RestoreOneResult {
  const { conv, files } = place;
  const name = (file: string): string => conv.at(path.basename(file));
  const stamp = snapshotName(new Date());
  const tmp = path.join(place.work, path.basename(files.db));
  const exists = lstatOrNull(name(files.db)) !== null;
  const probed = exists ? lockProbe(files.db, name(files.db), opts.force) : undefined;
  const probe = probed === 'damaged' ? undefined : probed;
  const preName = `${path.basename(files.db)}.pre-restore-${stamp}`;
  const snapshotFile = path.join(opts.snapshotDir, opts.session.file);
  let preRestore: string | null = null;
  let unchanged = false;
  try {
    if (exists) {
      unchanged = !safetyCopy(probe, place, preName, { file: snapshotFile, compacted: opts.session.compacted });
      if (!unchanged) preRestore = path.join(path.dirname(files.db), preName);
    }
    prepareCopy(snapshotFile, tmp);
  } catch (err) {
    probe?.close();
    // the original is untouched: no second copy
    if (preRestore) for (const f of [preName, `${preName}-wal`]) fs.rmSync(conv.at(f), { force: true });
    throw err;
  }
  swap(probe, place, tmp, opts.recheck);
  restoreMeta(opts, name(files.meta));
  if (preRestore) prunePreRestore(conv, opts.session.id);
  return { preRestore, unchanged };
}

/** Keep the newest PRE_RESTORE_KEEP safety copies of one conversation (names sort by their UTC stamp); best effort. */
function prunePreRestore(conv: PinnedDir, id: string): void {
  const stamps = new Set<string>();
  let names: string[];
  try {
    names = fs.readdirSync(conv.path);
  } catch {
    return;
  }
  for (const n of names) {
    const m = PRE_RESTORE_FILE.exec(n);
    if (m && m[1]!.toLowerCase() === id.toLowerCase()) stamps.add(m[2]!);
  }
  const old = [...stamps].sort().slice(0, -PRE_RESTORE_KEEP);
  for (const stamp of old)
    for (const n of names.filter((n) => n.startsWith(`${id}.db.pre-restore-${stamp}`)))
      fs.rmSync(conv.at(n), { force: true });
}

/** A conversation file that is a symlink is refused (exit 2): SQLite and copies would follow it out of the state dir. */
export function assertConversationNotLinked(files: ReturnType<typeof conversationFiles>): void {
  assertNotSymlink(files.db, 'a conversation database');
  assertNotSymlink(files.wal, "a conversation database's WAL");
  assertNotSymlink(files.shm, "a conversation database's shared-memory file");
  assertNotSymlink(files.meta, "a conversation's .meta file");
}

/**
 * Two SQLite-level checks on a connection agyctl opens. A failed
 * `BEGIN EXCLUSIVE` means a process is writing the database right now:
 * never overridden. An exclusive locking-mode read fails while any other
 * connection has the database open at all (in WAL mode each one keeps a
 * shared lock), which also catches servers /proc cannot see (another
 * container, another host on shared storage): like the /proc finding, only
 * `--force` overrides it. When it succeeds the lock is held until the swap.
 */
function lockProbe(db: string, pinned: string, force: boolean): Db | 'damaged' {
  // SQLite opens by path: what it opened must be the file in the directory held open.
  const checked = fs.lstatSync(pinned);
  const conn = openReadWrite(db, PROBE_TIMEOUT_MS);
  try {
    assertNotSymlink(pinned, 'a conversation database'); // swapped in since the first check: close without reading
    if (!holdsOpen(checked)) throw new SwappedError(db);
    if (exclusiveRead(conn)) return conn;
    conn.pragma('locking_mode = NORMAL');
    conn.exec('BEGIN EXCLUSIVE; COMMIT');
    if (!force)
      throw new OpenElsewhereError(
        `${path.basename(db)} is open in another SQLite connection (a server /proc cannot see?)`,
      );
    return conn;
  } catch (err) {
    conn.close();
    if (isDamaged(err)) return 'damaged'; // restoring over a broken database is what restore is for
    if (isBusy(err))
      throw new LockedError(`${path.basename(db)} is being written by another process (SQLite exclusive-lock probe)`);
    throw err;
  }
}

function exclusiveRead(conn: Db): boolean {
  conn.pragma('locking_mode = EXCLUSIVE');
  try {
    conn.prepare('SELECT count(*) FROM sqlite_master').get();
    conn.exec('BEGIN EXCLUSIVE; COMMIT');
    return true;
  } catch (err) {
    if (isBusy(err)) return false;
    throw err;
  }
}

/**
 * The current database, kept beside it as `target` (false: not kept, it holds the snapshot's content): a VACUUM INTO copy, or
 * for a database SQLite cannot read, the raw files (`-wal` beside the copy,
 * where SQLite would look for it). Made in the work dir, given mode 0600,
 * then renamed to `target` in conversations/.
 */
function safetyCopy(probe: Db | undefined, place: Place, target: string, snapshot: SnapshotDbFile): boolean {
  const { files } = place;
  const copy = path.join(place.work, 'pre-restore.db');
  const current = (file: string): string => place.conv.at(path.basename(file));
  let wal = false;
  try {
    if (!probe) throw Object.assign(new Error('unreadable'), { code: 'SQLITE_NOTADB' });
    probe.prepare('VACUUM INTO ?').run(copy);
    // The same content as the snapshot (a restore run twice): a copy would only pile up.
    if (holdsSnapshotContent(copy, snapshot, place.work)) {
      fs.rmSync(copy, { force: true });
      return false;
    }
  } catch (err) {
    if (!isDamaged(err)) throw err;
    fs.rmSync(copy, { force: true });
    copyFileNoFollow(current(files.db), copy, 0o600);
    if (lstatOrNull(current(files.wal))) {
      copyFileNoFollow(current(files.wal), `${copy}-wal`, 0o600);
      wal = true;
    }
  }
  if (wal) moveIn(place, `${copy}-wal`, `${target}-wal`);
  moveIn(place, copy, target);
  return true;
}

/** A finished file of the work dir into conversations/ as `name` (renamed: the same file system). */
function moveIn(place: Place, file: string, name: string): void {
  finishFile(file, 0o600);
  fs.renameSync(file, place.conv.at(name));
}

function isDamaged(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(NOTADB|CORRUPT)/.test(code);
}

function prepareCopy(snapshotFile: string, tmp: string): void {
  copyFileNoFollow(snapshotFile, tmp, 0o600);
  const db = openReadWrite(tmp, 0);
  try {
    db.pragma('journal_mode = WAL'); // the server keeps its databases in WAL mode
    const integrity = integrityCheck(db);
    if (integrity !== 'ok') throw new Error(`the restored copy failed integrity_check: ${integrity}`);
  } finally {
    db.close(); // sole connection: checkpoints and removes the copy's own -wal
  }
  finishFile(tmp, 0o600);
}

function swap(probe: Db | undefined, place: Place, staged: string, recheck: () => void): void {
  const { conv, files } = place;
  // Closing the probe, when it is the only connection, may checkpoint the old WAL into the old file: same content, and it goes next.
  probe?.close();
  recheck();
  fs.rmSync(conv.at(path.basename(files.wal)), { force: true });
  fs.rmSync(conv.at(path.basename(files.shm)), { force: true });
  fs.renameSync(staged, conv.at(path.basename(files.db))); // replaces the name: a link planted meanwhile is replaced, never followed
  conv.fsync();
}

function restoreMeta(opts: RestoreOneOptions, target: string): void {
  const meta = opts.session.meta;
  if (!meta) return;
  writeFileAtomic(target, readFileNoFollow(path.join(opts.snapshotDir, meta.file)), {
    mode: 0o600,
    exactMode: true,
  });
}
