/**
 * The steps of snapshotDb run in the worker pool: the VACUUM INTO of one
 * session in one worker while other sessions use the others, and the checks
 * of a large fresh copy split so integrity_check + row counts, sha256 and the
 * fsync run at the same time (one worker each, fsync in libuv's pool); small
 * copies are checked and hashed in one task (one round trip).
 */
import fs from 'node:fs';
import { InterruptedError } from '../errors.js';
import type { CheckedFile } from './parallel-check.js';
import type { WorkerPool } from './worker-pool.js';

const SPLIT_FROM_BYTES = 8 * 1024 * 1024;

export async function vacuumInPool(pool: WorkerPool, source: string, tmp: string, busyBudgetMs: number): Promise<number> {
  try {
    return await pool.run<number>({ kind: 'vacuum', source, tmp, busyBudgetMs });
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (pool.aborted) throw new InterruptedError();
    throw err;
  }
}

export async function checkHashSyncInPool(pool: WorkerPool, file: string): Promise<CheckedFile> {
  const bytes = fs.statSync(file).size;
  if (bytes < SPLIT_FROM_BYTES) {
    const synced = fsyncAsync(file);
    const checked = pool.run<Omit<CheckedFile, 'bytes'>>({ kind: 'checkHash', file });
    const [c, s] = await Promise.allSettled([checked, synced]);
    if (c.status === 'rejected') throw c.reason;
    if (s.status === 'rejected') throw s.reason;
    return { ...c.value, bytes };
  }
  const [checked, sha256, synced] = await Promise.allSettled([
    pool.run<{ integrity: string; rows: Record<string, number> }>({ kind: 'check', file }),
    pool.run<string>({ kind: 'hash', file }),
    fsyncAsync(file),
  ]);
  for (const r of [checked, sha256, synced]) if (r.status === 'rejected') throw r.reason;
  return { ...(checked as PromiseFulfilledResult<{ integrity: string; rows: Record<string, number> }>).value, sha256: (sha256 as PromiseFulfilledResult<string>).value, bytes };
}

function fsyncAsync(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, 'r', (err, fd) => {
      if (err) return reject(err);
      fs.fsync(fd, (syncErr) => fs.close(fd, () => (syncErr ? reject(syncErr) : resolve())));
    });
  });
}
