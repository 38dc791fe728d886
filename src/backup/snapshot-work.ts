/**
 * The work of the snapshot pool (worker-pool.ts), as plain functions: the
 * pool runs them in its worker threads through the thin shim
 * snapshot-worker.ts, or on the calling thread (the pool's in-thread mode,
 * and its "one session: copy and hash here" policy). Nothing here
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
import { copyLiveInto, WAL_HEADER_BYTES } from './live-copy.js';
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
  const { free, pages } = rollbackByHeader(tmp) ?? checkpointIntoRollback(tmp);
  for (const s of SIDECARS) fs.rmSync(`${tmp}${s}`, { force: true });
  if (!compact && !(pages > 0 && free / pages > COMPACT_FREE_RATIO)) return false;
  vacuumInto(tmp, `${tmp}.compact`);
  fs.renameSync(`${tmp}.compact`, tmp);
  return true;
}

interface PageCounts {
  free: number;
  pages: number;
}

function checkpointIntoRollback(tmp: string): PageCounts {
  const db = openReadWrite(tmp, 0);
  try {
    // The snapshot is fsynced once by us at the end; SQLite's own syncs would only slow it down.
    db.pragma('synchronous = OFF');
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    if (result && result.busy !== 0)
      throw Object.assign(new Error('the private copy could not be checkpointed'), { code: 'SQLITE_BUSY' });
    const mode = db.pragma('journal_mode = DELETE', { simple: true });
    if (mode !== 'delete') throw new Error(`the private copy stayed in journal mode ${String(mode)}`);
    return {
      free: db.pragma('freelist_count', { simple: true }) as number,
      pages: db.pragma('page_count', { simple: true }) as number,
    };
  } finally {
    db.close();
  }
}

/** The database header (sqlite.org/fileformat2.html, "The Database Header"). */
const HEADER_BYTES = 100;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * A copy with no WAL frame beside it is whole in its db file, and becomes a
 * rollback-journal database by its header's two format bytes (18 and 19: 2
 * is WAL, 1 rollback), all that `journal_mode = DELETE` changes in it but
 * the change counter, which only other connections read (it has none).
 * Saves an open for writing, a checkpoint and a journal file per session;
 * integrity_check reads the result as SQLite. The page counts come from the
 * header. Null, for SQLite to do it, when the WAL may hold frames or the
 * header is not one whose counts hold.
 */
function rollbackByHeader(tmp: string): PageCounts | null {
  // A WAL no longer than its header holds no frame.
  if ((fs.statSync(`${tmp}-wal`, { throwIfNoEntry: false })?.size ?? 0) > WAL_HEADER_BYTES) return null;
  const fd = fs.openSync(tmp, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW);
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    if (fs.readSync(fd, head, 0, HEADER_BYTES, 0) !== HEADER_BYTES) return null;
    const counts = headerCounts(head, fs.fstatSync(fd).size);
    if (counts === null) return null;
    if (head[18] === 2) fs.writeSync(fd, Buffer.from([1, 1]), 0, 2, 18);
    return counts;
  } finally {
    fs.closeSync(fd);
  }
}

/** Free and total pages from a header whose counts are valid for a file of `bytes`; else null. */
function headerCounts(head: Buffer, bytes: number): PageCounts | null {
  if (!head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return null;
  if (head[18] !== head[19] || (head[18] !== 1 && head[18] !== 2)) return null;
  // The in-header page count is trusted only when "version-valid-for" is the change counter.
  if (head.readUInt32BE(24) !== head.readUInt32BE(92)) return null;
  const pageSize = head.readUInt16BE(16) === 1 ? 65536 : head.readUInt16BE(16);
  const pages = head.readUInt32BE(28);
  if (pageSize < 512 || pages * pageSize !== bytes) return null;
  return { free: head.readUInt32BE(36), pages };
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
