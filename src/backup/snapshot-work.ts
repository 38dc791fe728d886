/**
 * The work of the snapshot pool (worker-pool.ts), as plain functions: the
 * pool runs them in its worker threads through the thin shim
 * snapshot-worker.ts, or on the calling thread (the pool's in-thread mode,
 * and its "first vacuum here while the workers boot" policy). Nothing here
 * knows which.
 *
 * Tasks: `vacuum` (a private copy of the live files, VACUUM INTO from it,
 * with retries; a small snapshot is also checked and hashed in the same
 * task, one round trip per session, its pages still hot), `check`
 * (integrity_check and row counts of a fresh copy), `hash` (sha256).
 */
import fs from 'node:fs';
import { InterruptedError } from '../core/errors.js';
import { formatDuration } from '../util/duration.js';
import { sha256FileAsync } from '../util/os/file-hash.js';
import { copyLiveDatabase } from './live-copy.js';
import { checkFreshCopy, isBusy, isCorrupt, openReadOnly, VACUUM_CACHE_KIB } from './sqlite.js';

type VacuumTask = Extract<Task, { kind: 'vacuum' }>;

export type Task =
  | { kind: 'vacuum'; source: string; tmp: string; busyBudgetMs: number; checkBelowBytes?: number }
  | { kind: 'check'; file: string }
  | { kind: 'hash'; file: string };

export interface CheckedCopy {
  integrity: string;
  rows: Record<string, number>;
  sha256: string;
}

export interface Vacuumed {
  attempts: number;
  bytes: number;
  /** Present for a copy below `checkBelowBytes`: checked and hashed by the task that made it. */
  checked?: CheckedCopy;
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

/** Runs one task; `aborted()` (Ctrl-C) is polled between a vacuum's retries. */
export async function runTask(task: Task, aborted: () => boolean): Promise<unknown> {
  switch (task.kind) {
    case 'vacuum': {
      const attempts = await vacuumWithRetries(task, aborted);
      const bytes = fs.statSync(task.tmp).size;
      if (task.checkBelowBytes === undefined || bytes >= task.checkBelowBytes) return { attempts, bytes };
      return { attempts, bytes, checked: await checkAndHash(task.tmp) } satisfies Vacuumed;
    }
    case 'check':
      return checkFreshCopy(task.file);
    case 'hash':
      return sha256FileAsync(task.file);
  }
}

async function checkAndHash(file: string): Promise<CheckedCopy> {
  return { ...checkFreshCopy(file), sha256: await sha256FileAsync(file) };
}

/**
 * A copy the live files changed under (a WAL started over meanwhile), or
 * one not taken because a writer was mid-commit or held the database
 * exclusively, is retried within a total budget, so one stuck session
 * cannot hold up the whole run. Between attempts the thread's event loop
 * runs (signals, on the main thread) and `aborted()` is asked.
 */
async function vacuumWithRetries(task: VacuumTask, aborted: () => boolean): Promise<number> {
  const deadline = Date.now() + task.busyBudgetMs;
  for (let attempt = 1; ; attempt += 1) {
    if (vacuumAttempt(task, deadline, attempt)) return attempt;
    await new Promise((resolve) => setImmediate(resolve));
    if (aborted()) throw new InterruptedError();
  }
}

/** A copy that slipped past live-copy.ts's checks torn reads as corrupt: tried again this often before it counts as corrupt. */
const CORRUPT_TRIES = 3;

/**
 * One private copy of the live files (live-copy.ts), then VACUUM INTO from
 * it: true when done, false when the files changed under the copy and the
 * budget allows another try; throws otherwise.
 */
function vacuumAttempt({ source, tmp, busyBudgetMs }: VacuumTask, deadline: number, attempt: number): boolean {
  fs.rmSync(tmp, { force: true });
  const dir = `${tmp}.src`;
  fs.mkdirSync(dir, { mode: 0o700 });
  let cause: unknown;
  try {
    const copy = copyLiveDatabase(source, dir);
    if (copy !== null) {
      vacuumInto(copy, tmp);
      return true;
    }
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (!isBusy(err) && !(isCorrupt(err) && attempt < CORRUPT_TRIES)) throw err;
    cause = err;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (Date.now() >= deadline) {
    throw new SnapshotError(
      `the database stayed locked or kept changing for ${formatDuration(busyBudgetMs)} (${attempt} attempts)`,
      'busy',
      { cause },
    );
  }
  return false;
}

/** The private copy, read-only: closing it never checkpoints, and nothing but agyctl has it. */
function vacuumInto(copy: string, tmp: string): void {
  const db = openReadOnly(copy, 0);
  try {
    // The snapshot is fsynced once by us at the end; SQLite's own syncs would only slow it down.
    db.pragma('synchronous = OFF');
    // VACUUM INTO gives the snapshot this connection's cache size; why small is faster: docs/backup.md.
    db.pragma(`cache_size = -${VACUUM_CACHE_KIB}`);
    db.prepare('VACUUM INTO ?').run(tmp);
  } finally {
    db.close();
  }
}
