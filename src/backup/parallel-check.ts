/**
 * Checking a fresh snapshot file: integrity_check and row counts (SQLite, on
 * this thread), sha256 and fsync. For large files the hash runs in a worker
 * thread and the fsync in libuv's pool, so the three overlap (two cores read
 * the same cached pages); small files are done in line, where a worker's
 * start-up would cost more than it saves.
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fsyncFile, sha256File } from './files.js';
import { checkFreshCopy } from './sqlite.js';

const PARALLEL_FROM_BYTES = 32 * 1024 * 1024;

export interface CheckedFile {
  integrity: string;
  rows: Record<string, number>;
  sha256: string;
  bytes: number;
}

export async function checkHashSync(file: string): Promise<CheckedFile> {
  const bytes = fs.statSync(file).size;
  if (bytes < PARALLEL_FROM_BYTES) {
    const checked = checkFreshCopy(file);
    const sha256 = sha256File(file);
    fsyncFile(file);
    return { ...checked, sha256, bytes };
  }
  const hashed = hashInWorker(file);
  const synced = fsyncAsync(file);
  let checked: ReturnType<typeof checkFreshCopy> | undefined;
  let failure: unknown;
  try {
    checked = checkFreshCopy(file);
  } catch (err) {
    failure = err;
  }
  const [hash, sync] = await Promise.allSettled([hashed, synced]);
  if (failure !== undefined) throw failure;
  if (hash.status === 'rejected') throw hash.reason;
  if (sync.status === 'rejected') throw sync.reason;
  return { ...checked!, sha256: hash.value, bytes };
}

function hashInWorker(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./hash-worker.js', import.meta.url), { workerData: { file } });
    worker.once('message', (m: { sha256?: string; error?: string; code?: string }) => {
      if (m.sha256) resolve(m.sha256);
      else reject(Object.assign(new Error(m.error ?? 'hashing failed'), { code: m.code }));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`hash worker exited ${code}`))));
  });
}

function fsyncAsync(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, 'r', (err, fd) => {
      if (err) return reject(err);
      fs.fsync(fd, (syncErr) => fs.close(fd, () => (syncErr ? reject(syncErr) : resolve())));
    });
  });
}
