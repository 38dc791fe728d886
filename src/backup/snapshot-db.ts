/**
 * One consistent snapshot of a live conversation database.
 *
 * VACUUM INTO from a read-only connection that agyctl opens: the copy comes
 * from one read transaction, so it includes everything committed in the WAL
 * and nothing torn by a concurrent checkpoint (a file copy of the .db alone
 * reads empty while the schema still sits in the WAL; `cp` racing a
 * checkpoint gives corrupt copies). SQLite's step-wise online backup is not
 * used: it restarts on every commit of a live writer and never finishes.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InterruptedError } from '../core/errors.js';
import { fsyncDir } from '../util/atomic-write.js';
import { formatDuration } from '../util/duration.js';
import {
  assertNotSymlink,
  assertPrivateDir,
  finishFile,
  holdsOpen,
  lstatOrNull,
  SwappedError,
} from '../util/safe-fs.js';
import { checkInLine } from './check-copy.js';
import { SNAPSHOT_FILE_MODE } from './files.js';
import { type Db, isBusy, openReadOnly, VACUUM_CACHE_KIB } from './sqlite.js';
import type { SyncBatch } from './sync-batch.js';
import type { WorkerPool } from './worker-pool.js';

/** How a backup run snapshots: in its worker pool, fsyncs batched at the end of the run. */
export interface Pooled {
  pool: WorkerPool;
  sync: SyncBatch;
  /** Vacuum on this thread (only one session to snapshot: the workers boot meanwhile, off the critical path); checks still in the pool. */
  vacuumHere?: boolean;
}

export interface SnapshotResult {
  bytes: number;
  sha256: string;
  integrity: string;
  rows: Record<string, number>;
  attempts: number;
}

export class SnapshotError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Each attempt's busy timeout is at most this, so Ctrl-C is noticed between attempts within about a second. */
const ATTEMPT_MS = 1000;

/**
 * VACUUM INTO `destDir/.name.<random>.tmp`, check and hash it, make it 0600,
 * fsync, rename to `destDir/name`, fsync the directory. A backup run passes
 * its pool: the vacuum and the checks run in its worker threads and the
 * fsyncs in its SyncBatch (pooled-snapshot.ts); without one all runs here
 * (check-copy.ts), for in-process use. A source database
 * (or its `-wal`/`-shm`) that is a symlink is refused: SQLite would follow it
 * out of the state dir. `destDir` must be a directory agyctl just created
 * (the run's private work dir); the random name is a second guard.
 */
export async function snapshotDb(
  source: string,
  destDir: string,
  name: string,
  busyBudgetMs: number,
  signal?: AbortSignal,
  pool?: Pooled,
): Promise<SnapshotResult> {
  for (const f of [source, `${source}-wal`, `${source}-shm`]) assertNotSymlink(f, 'a conversation database file');
  assertPrivateDir(destDir);
  const tmp = path.join(destDir, `.${name}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const pooled = pool ? await import('./pooled-snapshot.js') : undefined;
  const vacuumed =
    pooled && !pool!.vacuumHere
      ? await pooled.vacuumInPool(pool!.pool, source, tmp, busyBudgetMs)
      : { attempts: await vacuumWithRetries(source, tmp, busyBudgetMs, signal), checked: undefined };
  const attempts = vacuumed.attempts;
  try {
    const { integrity, rows, sha256, bytes } = vacuumed.checked
      ? { ...vacuumed.checked, bytes: fs.statSync(tmp).size }
      : pooled
        ? await pooled.checkHashInPool(pool!.pool, tmp)
        : checkInLine(tmp);
    if (integrity !== 'ok') throw new SnapshotError(`the snapshot failed integrity_check: ${integrity}`, 'integrity');
    // VACUUM INTO creates it 0644 under umask 022; conversations are private.
    finishFile(tmp, SNAPSHOT_FILE_MODE, undefined, { fsync: !pool });
    assertPrivateDir(destDir);
    fs.renameSync(tmp, path.join(destDir, name));
    // A pooled run snapshots into its .partial work dir: its SyncBatch fsyncs the file in the background (again,
    // cheaply, for a large copy fsynced while it was checked: its mode changed since), and the run fsyncs the
    // directory before it becomes a snapshot.
    if (!pool) fsyncDir(destDir);
    else pool.sync.add(path.join(destDir, name));
    return { bytes, sha256, integrity, rows, attempts };
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * A busy database (a writer in exclusive locking mode, WAL recovery) is
 * retried with a bounded busy timeout per attempt, within a total budget, so
 * one stuck session cannot hold up the whole run. Between attempts the event
 * loop runs, so a Ctrl-C stops the run.
 */
async function vacuumWithRetries(
  source: string,
  tmp: string,
  busyBudgetMs: number,
  signal: AbortSignal | undefined,
): Promise<number> {
  const deadline = Date.now() + busyBudgetMs;
  for (let attempt = 1; ; attempt += 1) {
    if (vacuumAttempt(source, tmp, deadline, busyBudgetMs, attempt)) return attempt;
    await new Promise((resolve) => setImmediate(resolve));
    if (signal?.aborted) throw new InterruptedError();
  }
}

/** The same retries for a worker thread: synchronous, and `aborted()` (Ctrl-C) is polled between attempts. */
export function vacuumWithRetriesSync(
  source: string,
  tmp: string,
  busyBudgetMs: number,
  aborted: () => boolean,
): number {
  const deadline = Date.now() + busyBudgetMs;
  for (let attempt = 1; ; attempt += 1) {
    if (vacuumAttempt(source, tmp, deadline, busyBudgetMs, attempt)) return attempt;
    if (aborted()) throw new InterruptedError();
  }
}

/** One VACUUM INTO: true when done, false when the database was busy and the budget allows another try; throws otherwise. */
function vacuumAttempt(source: string, tmp: string, deadline: number, busyBudgetMs: number, attempt: number): boolean {
  fs.rmSync(tmp, { force: true });
  try {
    vacuumInto(source, tmp, Math.max(10, Math.min(ATTEMPT_MS, deadline - Date.now())));
    return true;
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (!isBusy(err)) throw err;
    if (Date.now() >= deadline) {
      throw new SnapshotError(
        `the database stayed locked for ${formatDuration(busyBudgetMs)} (${attempt} attempts)`,
        'busy',
        { cause: err },
      );
    }
    return false;
  }
}

function vacuumInto(source: string, tmp: string, busyTimeoutMs: number): void {
  let db: Db | undefined;
  const sidecars = missingSidecars(source);
  try {
    const checked = fs.lstatSync(source);
    if (!checked.isFile()) throw new SwappedError(source);
    db = openReadOnly(source, busyTimeoutMs);
    if (!holdsOpen(checked)) throw new SwappedError(source);
    // The copy is fsynced once by us at the end; SQLite's own syncs would only slow it down.
    db.pragma('synchronous = OFF');
    // VACUUM INTO gives the copy this connection's cache size. A small cache is faster here, not slower
    // (bench/backup, 269 MB: 16 MB cache 310-340 ms, 256 KB 220-260 ms): the copy streams through once,
    // and pages handed back to the kernel early stay in the CPU caches.
    db.pragma(`cache_size = -${VACUUM_CACHE_KIB}`);
    db.prepare('VACUUM INTO ?').run(tmp);
  } finally {
    db?.close(); // a read-only connection never checkpoints or deletes the server's WAL on close
    giveToOwner(source, sidecars);
  }
}

/**
 * Reading a WAL database whose server is stopped makes SQLite create empty
 * `-wal` and `-shm` files, and leave them. They must not be deleted (a server
 * may have opened them meanwhile); when agyctl runs as root they are handed
 * to the database's owner, so the server can still open its own database.
 */
function missingSidecars(db: string): string[] {
  return [`${db}-wal`, `${db}-shm`].filter((f) => lstatOrNull(f) === null);
}

function giveToOwner(db: string, created: string[]): void {
  if (process.getuid?.() !== 0) return;
  try {
    const owner = fs.lstatSync(db);
    for (const f of created) {
      const st = lstatOrNull(f);
      // lchown: a link planted in the user's directory meanwhile is never followed.
      if (st?.isFile() && (st.uid !== owner.uid || st.gid !== owner.gid)) fs.lchownSync(f, owner.uid, owner.gid);
    }
  } catch {
    // best effort: the snapshot itself is fine either way
  }
}
