/**
 * The work of the snapshot pool (worker-pool.ts), as plain functions: the
 * pool runs them in its worker threads through the thin shim
 * snapshot-worker.ts, or on the calling thread (the pool's in-thread mode,
 * and its "first vacuum here while the workers boot" policy). Nothing here
 * knows which.
 *
 * Tasks: `copy` (the private copy of the live files made where the
 * snapshot will be, its WAL checkpointed into it, compacted with VACUUM
 * INTO only when that pays; with retries; a small snapshot is also checked
 * and hashed in the same task, one round trip per session, its pages still
 * hot), `check` (integrity_check and row counts of a fresh copy), `hash`
 * (sha256).
 */
import fs from 'node:fs';
import { InterruptedError } from '../core/errors.js';
import { formatDuration } from '../util/duration.js';
import { sha256FileAsync } from '../util/os/file-hash.js';
import { copyLiveInto } from './live-copy.js';
import { checkFreshCopy, isBusy, isCorrupt, openReadOnly, openReadWrite, VACUUM_CACHE_KIB } from './sqlite.js';

interface CopyTask {
  kind: 'copy';
  source: string;
  tmp: string;
  busyBudgetMs: number;
  /** --compact: VACUUM INTO whatever the free pages. */
  compact?: boolean;
  checkBelowBytes?: number;
}

export type Task = CopyTask | { kind: 'check'; file: string } | { kind: 'hash'; file: string };

export interface CheckedCopy {
  integrity: string;
  rows: Record<string, number>;
  sha256: string;
}

export interface Copied {
  attempts: number;
  bytes: number;
  /** Whether the copy was compacted (VACUUM INTO): free pages above COMPACT_FREE_RATIO, or --compact. */
  compacted: boolean;
  /** Present for a copy below `checkBelowBytes`: checked and hashed by the task that made it. */
  checked?: CheckedCopy;
}

/**
 * A copy whose free pages are more than this share of its pages is compacted
 * (VACUUM INTO): below it the second pass over the live pages costs more
 * than the space it gives back (figures: docs/backup.md, Speed).
 */
export const COMPACT_FREE_RATIO = 0.25;

export class SnapshotError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Runs one task; `aborted()` (Ctrl-C) is polled between a copy's retries. */
export async function runTask(task: Task, aborted: () => boolean): Promise<unknown> {
  switch (task.kind) {
    case 'copy': {
      const { attempts, compacted } = await copyWithRetries(task, aborted);
      const bytes = fs.statSync(task.tmp).size;
      if (task.checkBelowBytes === undefined || bytes >= task.checkBelowBytes) return { attempts, bytes, compacted };
      return { attempts, bytes, compacted, checked: await checkAndHash(task.tmp) } satisfies Copied;
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
async function copyWithRetries(
  task: CopyTask,
  aborted: () => boolean,
): Promise<{ attempts: number; compacted: boolean }> {
  const deadline = Date.now() + task.busyBudgetMs;
  for (let attempt = 1; ; attempt += 1) {
    const compacted = copyAttempt(task, deadline, attempt);
    if (compacted !== null) return { attempts: attempt, compacted };
    await new Promise((resolve) => setImmediate(resolve));
    if (aborted()) throw new InterruptedError();
  }
}

/** A copy that slipped past live-copy.ts's checks torn reads as corrupt: tried again this often before it counts as corrupt. */
const CORRUPT_TRIES = 3;

/** What SQLite may leave beside a database it worked on. */
const SIDECARS = ['-wal', '-shm', '-journal'];

/** The temporary snapshot and everything SQLite made beside it. */
export function removeTemp(tmp: string): void {
  for (const f of [
    tmp,
    ...SIDECARS.map((s) => `${tmp}${s}`),
    `${tmp}.compact`,
    ...SIDECARS.map((s) => `${tmp}.compact${s}`),
  ])
    fs.rmSync(f, { force: true });
}

/**
 * One private copy of the live files (live-copy.ts) as `tmp` itself, made
 * a snapshot (snapshotFromCopy): whether it was compacted when done, null
 * when the files changed under the copy and the budget allows another try;
 * throws otherwise.
 */
function copyAttempt(
  { source, tmp, busyBudgetMs, compact }: CopyTask,
  deadline: number,
  attempt: number,
): boolean | null {
  removeTemp(tmp);
  let cause: unknown;
  try {
    if (copyLiveInto(source, tmp)) return snapshotFromCopy(tmp, compact === true);
    removeTemp(tmp);
  } catch (err) {
    removeTemp(tmp);
    if (!isBusy(err) && !(isCorrupt(err) && attempt < CORRUPT_TRIES)) throw err;
    cause = err;
  }
  if (Date.now() >= deadline) {
    throw new SnapshotError(
      `the database stayed locked or kept changing for ${formatDuration(busyBudgetMs)} (${attempt} attempts)`,
      'busy',
      { cause },
    );
  }
  return null;
}

/**
 * The private copy becomes the snapshot: its WAL checkpointed into it and
 * truncated, then rollback-journal mode (what snapshots always were: a
 * read-only open needs no -wal or -shm beside it, and restore turns it back
 * into WAL mode for the server). Nothing but agyctl has this file. Compacted
 * with VACUUM INTO (into a second file, renamed over it) only when `compact`
 * or its free pages pass COMPACT_FREE_RATIO. Returns whether it was.
 */
function snapshotFromCopy(tmp: string, compact: boolean): boolean {
  const db = openReadWrite(tmp, 0);
  let free: number;
  let pages: number;
  try {
    // The snapshot is fsynced once by us at the end; SQLite's own syncs would only slow it down.
    db.pragma('synchronous = OFF');
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    if (result && result.busy !== 0)
      throw Object.assign(new Error('the private copy could not be checkpointed'), { code: 'SQLITE_BUSY' });
    const mode = db.pragma('journal_mode = DELETE', { simple: true });
    if (mode !== 'delete') throw new Error(`the private copy stayed in journal mode ${String(mode)}`);
    free = db.pragma('freelist_count', { simple: true }) as number;
    pages = db.pragma('page_count', { simple: true }) as number;
  } finally {
    db.close();
  }
  for (const s of SIDECARS) fs.rmSync(`${tmp}${s}`, { force: true });
  if (!compact && !(pages > 0 && free / pages > COMPACT_FREE_RATIO)) return false;
  vacuumInto(tmp, `${tmp}.compact`);
  fs.renameSync(`${tmp}.compact`, tmp);
  return true;
}

/** VACUUM INTO `out` from a snapshot of ours (read-only: closing it changes nothing). */
function vacuumInto(file: string, out: string): void {
  const db = openReadOnly(file, 0);
  try {
    db.pragma('synchronous = OFF');
    // VACUUM INTO gives its output this connection's cache size; why small is faster: docs/backup.md.
    db.pragma(`cache_size = -${VACUUM_CACHE_KIB}`);
    db.prepare('VACUUM INTO ?').run(out);
  } finally {
    db.close();
  }
}
