/**
 * Worker thread of the snapshot pool (worker-pool.ts): runs one task at a
 * time, synchronously, off the main thread, so sessions are snapshotted in
 * parallel and the main thread stays free for signals and progress.
 * Tasks: `vacuum` (VACUUM INTO with busy retries; a small copy is also
 * checked and hashed in the same task), `check` (integrity_check
 * and row counts of a fresh copy), `hash` (sha256), `checkHash` (both, for
 * small files where one round trip is cheaper than two).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { vacuumWithRetriesSync } from './snapshot-db.js';
import type { Task, TaskReply } from './snapshot-task.js';
import { checkFreshCopy } from './sqlite.js';

/** Set to 1 by the main thread on Ctrl-C: a vacuum stops between its retries. */
const abortFlag = new Int32Array((workerData as { abort: SharedArrayBuffer }).abort);
const aborted = (): boolean => Atomics.load(abortFlag, 0) === 1;

/** One read buffer per worker for all its hashes: no 1 MB garbage per file for the GC to catch up with (peak RSS). */
const buf = Buffer.allocUnsafe(1 << 20);

function sha256(file: string): string {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    for (let n = fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = fs.readSync(fd, buf, 0, buf.length, null))
      hash.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

function run(task: Task): unknown {
  switch (task.kind) {
    case 'vacuum': {
      // A small copy is checked and hashed right here: one round trip per session, its pages still hot.
      const attempts = vacuumWithRetriesSync(task.source, task.tmp, task.busyBudgetMs, aborted);
      const bytes = fs.statSync(task.tmp).size;
      if (task.checkBelowBytes === undefined || bytes >= task.checkBelowBytes) return { attempts, bytes };
      return { attempts, bytes, checked: { ...checkFreshCopy(task.tmp), sha256: sha256(task.tmp) } };
    }
    case 'check':
      return checkFreshCopy(task.file);
    case 'hash':
      return sha256(task.file);
    case 'checkHash':
      return { ...checkFreshCopy(task.file), sha256: sha256(task.file) };
  }
}

parentPort!.on('message', (msg: { id: number; task: Task }) => {
  let reply: TaskReply;
  try {
    reply = { id: msg.id, ok: true, value: run(msg.task) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = {
      id: msg.id,
      ok: false,
      error: { message: e.message, code: (e as { code?: unknown }).code, name: e.name },
    };
  }
  parentPort!.postMessage(reply);
});
