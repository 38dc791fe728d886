/**
 * Worker thread of the snapshot pool (worker-pool.ts): runs one task at a
 * time (the pool sends the next only after the reply), off the main thread,
 * so sessions are snapshotted in parallel and the main thread stays free for
 * signals and progress.
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

/** Two read buffers per worker for all its hashes: no 1 MB garbage per file for the GC to catch up with (peak RSS). */
const bufs = [Buffer.allocUnsafe(1 << 20), Buffer.allocUnsafe(1 << 20)] as const;

/**
 * sha256 of a fresh copy, the next chunk read (in libuv's pool) while this
 * thread hashes the last one: 269 MB in about 225 ms instead of 255 ms.
 */
async function sha256(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const read = (i: 0 | 1, pos: number): Promise<number> =>
    new Promise((resolve, reject) => {
      fs.read(fd, bufs[i], 0, bufs[i].length, pos, (err, n) => (err ? reject(err) : resolve(n)));
    });
  let i: 0 | 1 = 0;
  let pending = read(0, 0);
  try {
    for (let pos = 0, n = await pending; n > 0; n = await pending) {
      pos += n;
      const full = bufs[i];
      i = i === 0 ? 1 : 0;
      pending = read(i, pos);
      hash.update(full.subarray(0, n));
    }
  } finally {
    await pending.catch(() => {}); // never close the descriptor under a read still running
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

async function run(task: Task): Promise<unknown> {
  switch (task.kind) {
    case 'vacuum': {
      // A small copy is checked and hashed right here: one round trip per session, its pages still hot.
      const attempts = vacuumWithRetriesSync(task.source, task.tmp, task.busyBudgetMs, aborted);
      const bytes = fs.statSync(task.tmp).size;
      if (task.checkBelowBytes === undefined || bytes >= task.checkBelowBytes) return { attempts, bytes };
      return { attempts, bytes, checked: { ...checkFreshCopy(task.tmp), sha256: await sha256(task.tmp) } };
    }
    case 'check':
      return checkFreshCopy(task.file);
    case 'hash':
      return sha256(task.file);
    case 'checkHash':
      return { ...checkFreshCopy(task.file), sha256: await sha256(task.file) };
  }
}

parentPort!.on('message', async (msg: { id: number; task: Task }) => {
  let reply: TaskReply;
  try {
    reply = { id: msg.id, ok: true, value: await run(msg.task) };
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
