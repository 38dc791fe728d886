/**
 * One consistent snapshot of a live conversation database.
 *
 * VACUUM INTO from a read-only connection that agyctl opens: the copy comes
 * from one read transaction, so it includes everything committed in the WAL
 * and nothing torn by a concurrent checkpoint (a file copy of the .db alone
 * reads empty while the schema still sits in the WAL; `cp` racing a
 * checkpoint gives corrupt copies). SQLite's step-wise online backup is not
 * used: it restarts on every commit of a live writer and never finishes.
 *
 * The steps run in the run's worker pool (worker-pool.ts): the VACUUM INTO
 * of one session in one worker while other sessions use the others, and the
 * checks of a large fresh copy split so integrity_check + row counts and
 * sha256 run at the same time on two workers while the copy is fsynced;
 * small copies are checked and hashed by the task that made them.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InterruptedError } from '../core/errors.js';
import { assertNotSymlink, assertPrivateDir, finishFile } from '../util/safe-fs.js';
import type { SyncBatch } from './files.js';
import { SNAPSHOT_FILE_MODE } from './files.js';
import { type CheckedCopy, SnapshotError, type Vacuumed } from './snapshot-work.js';
import type { WorkerPool } from './worker-pool.js';

/** Where a run's snapshot work goes: its worker pool, and its background fsyncs (flushed before the snapshot is renamed into place). */
export interface SnapshotRun {
  pool: WorkerPool;
  sync: SyncBatch;
}

export interface SnapshotResult extends CheckedCopy {
  bytes: number;
  attempts: number;
}

const SPLIT_FROM_BYTES = 8 * 1024 * 1024;

/**
 * VACUUM INTO `destDir/.name.<random>.tmp`, check and hash it, make it 0600,
 * rename to `destDir/name` and hand it to the run's SyncBatch. A source
 * database (or its `-wal`/`-shm`) that is a symlink is refused: SQLite would
 * follow it out of the state dir. `destDir` must be a directory agyctl just
 * created (the run's private work dir, fsynced by the run before it becomes
 * a snapshot); the random name is a second guard.
 */
export async function snapshotDb(
  source: string,
  destDir: string,
  name: string,
  busyBudgetMs: number,
  run: SnapshotRun,
): Promise<SnapshotResult> {
  for (const f of [source, `${source}-wal`, `${source}-shm`]) assertNotSymlink(f, 'a conversation database file');
  assertPrivateDir(destDir);
  const tmp = path.join(destDir, `.${name}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    const vacuumed = await vacuum(run.pool, source, tmp, busyBudgetMs);
    const checked = vacuumed.checked ?? (await checkAndHash(run.pool, tmp));
    if (checked.integrity !== 'ok')
      throw new SnapshotError(`the snapshot failed integrity_check: ${checked.integrity}`, 'integrity');
    // VACUUM INTO creates it 0644 under umask 022; conversations are private.
    finishFile(tmp, SNAPSHOT_FILE_MODE, undefined, { fsync: false });
    assertPrivateDir(destDir);
    fs.renameSync(tmp, path.join(destDir, name));
    // Again, cheaply, for a large copy fsynced while it was checked: its mode changed since.
    run.sync.add(path.join(destDir, name));
    return { ...checked, bytes: vacuumed.bytes, attempts: vacuumed.attempts };
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (run.pool.aborted) throw new InterruptedError();
    throw err;
  }
}

function vacuum(pool: WorkerPool, source: string, tmp: string, busyBudgetMs: number): Promise<Vacuumed> {
  return pool.run<Vacuumed>({ kind: 'vacuum', source, tmp, busyBudgetMs, checkBelowBytes: SPLIT_FROM_BYTES });
}

/** A large copy: checked, hashed and fsynced at once (the disk works while the CPUs do). */
async function checkAndHash(pool: WorkerPool, file: string): Promise<CheckedCopy> {
  const [checked, sha256, synced] = await Promise.allSettled([
    pool.run<Omit<CheckedCopy, 'sha256'>>({ kind: 'check', file }),
    pool.run<string>({ kind: 'hash', file }),
    fsyncAsync(file),
  ]);
  if (checked.status === 'rejected') throw checked.reason;
  if (sha256.status === 'rejected') throw sha256.reason;
  if (synced.status === 'rejected') throw synced.reason;
  return { ...checked.value, sha256: sha256.value };
}

function fsyncAsync(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, 'r', (err, fd) => {
      if (err) return reject(err);
      fs.fsync(fd, (syncErr) => fs.close(fd, () => (syncErr ? reject(syncErr) : resolve())));
    });
  });
}
