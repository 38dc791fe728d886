/**
 * The steps of snapshotDb run in the worker pool: the VACUUM INTO of one
 * session in one worker while other sessions use the others, and the checks
 * of a large fresh copy split so integrity_check + row counts and sha256 run
 * at the same time on two workers; small copies are checked and hashed in
 * one task (one round trip). Large copies are also fsynced meanwhile, so the
 * disk works while the CPUs do; the run's SyncBatch fsyncs every copy once
 * its mode is set (cheap for one already flushed).
 */
import fs from 'node:fs';
import { InterruptedError } from '../core/errors.js';
import type { CheckedFile } from './check-copy.js';
import type { WorkerPool } from './worker-pool.js';

const SPLIT_FROM_BYTES = 8 * 1024 * 1024;

export interface Vacuumed {
  attempts: number;
  bytes: number;
  /** Present for a small copy: checked and hashed by the worker that made it. */
  checked?: Omit<CheckedFile, 'bytes'>;
}

export async function vacuumInPool(
  pool: WorkerPool,
  source: string,
  tmp: string,
  busyBudgetMs: number,
): Promise<Vacuumed> {
  try {
    return await pool.run<Vacuumed>({ kind: 'vacuum', source, tmp, busyBudgetMs, checkBelowBytes: SPLIT_FROM_BYTES });
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (pool.aborted) throw new InterruptedError();
    throw err;
  }
}

/** A large copy is also fsynced here, while it is checked and hashed (the disk works while the CPUs do). */
export async function checkHashInPool(pool: WorkerPool, file: string): Promise<CheckedFile> {
  const bytes = fs.statSync(file).size;
  if (bytes < SPLIT_FROM_BYTES)
    return { ...(await pool.run<Omit<CheckedFile, 'bytes'>>({ kind: 'checkHash', file })), bytes };
  const [checked, sha256, synced] = await Promise.allSettled([
    pool.run<{ integrity: string; rows: Record<string, number> }>({ kind: 'check', file }),
    pool.run<string>({ kind: 'hash', file }),
    fsyncAsync(file),
  ]);
  if (checked.status === 'rejected') throw checked.reason;
  if (sha256.status === 'rejected') throw sha256.reason;
  if (synced.status === 'rejected') throw synced.reason;
  return { ...checked.value, sha256: sha256.value, bytes };
}

function fsyncAsync(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, 'r', (err, fd) => {
      if (err) return reject(err);
      fs.fsync(fd, (syncErr) => fs.close(fd, () => (syncErr ? reject(syncErr) : resolve())));
    });
  });
}
