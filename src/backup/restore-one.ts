/**
 * Putting one conversation back. The server must be stopped: renaming a
 * snapshot over a live database with its old `-wal` corrupts it, and
 * deleting the sidecars loses the server's next commits.
 *
 * Order: exclusive-lock probe (held until the swap), safety VACUUM INTO of the
 * current database, snapshot copied to a temporary file beside the target
 * and turned into WAL mode, checked and fsynced; only then the old `-wal` and
 * `-shm` go, the copy is renamed into place and the directory fsynced. Any
 * failure before the rename leaves the previous files as they were.
 */
import fs from 'node:fs';
import path from 'node:path';
import { conversationFiles } from '../paths.js';
import { fsyncDir, writeFileAtomic } from '../util/atomic-write.js';
import { fsyncFile } from './files.js';
import { snapshotName } from './layout.js';
import type { ManifestSession } from './manifest.js';
import { integrityCheck, isBusy, openReadWrite, type Db } from './sqlite.js';

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
}

const PROBE_TIMEOUT_MS = 1000;

export function restoreOne(opts: RestoreOneOptions): RestoreOneResult {
  const files = conversationFiles(opts.stateDir, opts.session.id);
  const stamp = snapshotName(new Date());
  const tmp = path.join(path.dirname(files.db), `.${path.basename(files.db)}.restore-${stamp}.tmp`);
  const exists = fs.existsSync(files.db);
  const probed = exists ? lockProbe(files.db, opts.force) : undefined;
  const probe = probed === 'damaged' ? undefined : probed;
  let preRestore: string | null = null;
  try {
    if (exists) preRestore = safetyCopy(probe, files, `${files.db}.pre-restore-${stamp}`);
    prepareCopy(path.join(opts.snapshotDir, opts.session.file), tmp);
  } catch (err) {
    probe?.close();
    removeTmp(tmp);
    if (preRestore) for (const f of [preRestore, `${preRestore}-wal`]) fs.rmSync(f, { force: true }); // the original is untouched: no second copy
    throw err;
  }
  swap(probe, files, tmp, opts.recheck);
  restoreMeta(opts, files.meta);
  return { preRestore };
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
function lockProbe(db: string, force: boolean): Db | 'damaged' {
  const conn = openReadWrite(db, PROBE_TIMEOUT_MS);
  try {
    if (exclusiveRead(conn)) return conn;
    conn.pragma('locking_mode = NORMAL');
    conn.exec('BEGIN EXCLUSIVE; COMMIT');
    if (!force) throw new OpenElsewhereError(`${path.basename(db)} is open in another SQLite connection (a server /proc cannot see?)`);
    return conn;
  } catch (err) {
    conn.close();
    if (isDamaged(err)) return 'damaged'; // restoring over a broken database is what restore is for
    if (isBusy(err)) throw new LockedError(`${path.basename(db)} is being written by another process (SQLite exclusive-lock probe)`);
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
 * The current database, kept beside it: a VACUUM INTO copy, or for a
 * database SQLite cannot read, the raw files (`-wal` beside the copy, where
 * SQLite would look for it).
 */
function safetyCopy(probe: Db | undefined, files: ReturnType<typeof conversationFiles>, target: string): string {
  try {
    if (!probe) throw Object.assign(new Error('unreadable'), { code: 'SQLITE_NOTADB' });
    probe.prepare('VACUUM INTO ?').run(target);
  } catch (err) {
    if (!isDamaged(err)) throw err;
    fs.rmSync(target, { force: true });
    fs.copyFileSync(files.db, target);
    if (fs.existsSync(files.wal)) {
      fs.copyFileSync(files.wal, `${target}-wal`);
      fsyncFile(`${target}-wal`);
    }
  }
  fsyncFile(target);
  return target;
}

function isDamaged(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(NOTADB|CORRUPT)/.test(code);
}

function prepareCopy(snapshotFile: string, tmp: string): void {
  fs.copyFileSync(snapshotFile, tmp);
  const db = openReadWrite(tmp, 0);
  try {
    db.pragma('journal_mode = WAL'); // the server keeps its databases in WAL mode
    const integrity = integrityCheck(db);
    if (integrity !== 'ok') throw new Error(`the restored copy failed integrity_check: ${integrity}`);
  } finally {
    db.close(); // sole connection: checkpoints and removes the copy's own -wal
  }
  fsyncFile(tmp);
}

function swap(probe: Db | undefined, files: ReturnType<typeof conversationFiles>, tmp: string, recheck: () => void): void {
  try {
    // Closing the probe, when it is the only connection, may checkpoint the old WAL into the old file: same content, and it goes next.
    probe?.close();
    recheck();
  } catch (err) {
    removeTmp(tmp);
    throw err;
  }
  fs.rmSync(files.wal, { force: true });
  fs.rmSync(files.shm, { force: true });
  fs.renameSync(tmp, files.db);
  fsyncDir(path.dirname(files.db));
}

function restoreMeta(opts: RestoreOneOptions, target: string): void {
  const meta = opts.session.meta;
  if (!meta) return;
  writeFileAtomic(target, fs.readFileSync(path.join(opts.snapshotDir, meta.file)), { mode: 0o600, followSymlink: false });
}

function removeTmp(tmp: string): void {
  for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) fs.rmSync(f, { force: true });
}
