/**
 * Backing up one conversation into the run's work directory: reuse its db
 * from the previous snapshot, or snapshot it afresh; its .meta and brain
 * alongside.
 *
 * Reuse: an unchanged session is linked from the previous complete snapshot
 * instead of vacuumed again. (inode, size, mtime) of the db and of the WAL
 * caught every commit in a stress test; `PRAGMA data_version` resets per
 * connection and ctime is touched by readers, so neither helps.
 *
 * Snapshot: one consistent copy of a live conversation database, by VACUUM
 * INTO from a read-only connection that agyctl opens: the copy comes
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
import fs from 'node:fs';
import path from 'node:path';
import { InterruptedError } from '../core/errors.js';
import { conversationFiles } from '../core/paths.js';
import { tempBeside } from '../util/os/atomic-write.js';
import { sha256File, sha256 as sha256Of } from '../util/os/file-hash.js';
import { assertNotSymlink, assertPrivateDir, finishFile, readFileNoFollow, writeNewFile } from '../util/os/safe-fs.js';
import { type BrainScan, copyBrain, type ManifestBrain, scanBrain } from './brain.js';
import {
  type FileIdentity,
  identityOf,
  linkOrCopy,
  SNAPSHOT_FILE_MODE,
  type SyncBatch,
  sameIdentity,
} from './files.js';
import type { ManifestFile, ManifestSession } from './manifest.js';
import { type CheckedCopy, SnapshotError, type Vacuumed } from './snapshot-work.js';
import type { WorkerPool } from './worker-pool.js';

export interface Previous {
  name: string;
  dir: string;
  sessions: Map<string, ManifestSession>;
}

export interface SessionJob {
  stateDir: string;
  id: string;
  cwd: string | null;
  workDir: string;
  previous: Previous | undefined;
  busyBudgetMs: number;
  /** The run's worker pool for the vacuum and the checks, and its background fsyncs. */
  run: SnapshotRun;
}

export async function backupSession(job: SessionJob): Promise<ManifestSession> {
  try {
    return await backupFiles(job);
  } catch (err) {
    // A failed session leaves nothing behind in the snapshot: no db or .meta without a manifest entry.
    for (const f of [`${job.id}.db`, `${job.id}.meta`, path.join('brain', job.id)])
      fs.rmSync(path.join(job.workDir, f), { recursive: true, force: true });
    throw err;
  }
}

async function backupFiles(job: SessionJob): Promise<ManifestSession> {
  const files = conversationFiles(job.stateDir, job.id);
  // Stat before the snapshot: a commit landing during VACUUM makes the next run see a change, never miss one.
  const source = currentState(files.db, files.wal);
  const brainScan = scanBrain(job.stateDir, job.id);
  const prev = job.previous?.sessions.get(job.id);
  const name = `${job.id}.db`;
  if (job.previous && prev && canReuse(prev, source, job.previous.dir)) {
    reuseFile(job.previous.dir, prev.file, job.workDir);
    if (prev.file !== name) fs.renameSync(path.join(job.workDir, prev.file), path.join(job.workDir, name));
    const meta = copyMeta(files.meta, job, prev);
    const brain = brainOf(brainScan, job, prev);
    return { ...entry(job, name, prev, meta, source, brain), reused: true, reusedFrom: job.previous.name };
  }
  const snap = await snapshotDb(files.db, job.workDir, name, job.busyBudgetMs, job.run);
  const meta = copyMeta(files.meta, job, prev);
  const brain = brainOf(brainScan, job, prev);
  return entry(
    job,
    name,
    { bytes: snap.bytes, sha256: snap.sha256, integrity: snap.integrity, rows: snap.rows },
    meta,
    source,
    brain,
  );
}

function brainOf(scan: BrainScan | null, job: SessionJob, prev: ManifestSession | undefined): ManifestBrain | null {
  if (scan === null) return null;
  const previous = job.previous && prev ? { dir: job.previous.dir, brain: prev.brain ?? undefined } : undefined;
  return copyBrain(scan, job.id, job.workDir, previous, job.run.sync);
}

function entry(
  job: SessionJob,
  file: string,
  data: Pick<ManifestSession, 'bytes' | 'sha256' | 'integrity' | 'rows'>,
  meta: ManifestFile | null,
  source: SourceState,
  brain: ManifestBrain | null,
): ManifestSession {
  return {
    id: job.id,
    cwd: job.cwd,
    file,
    bytes: data.bytes,
    sha256: data.sha256,
    integrity: data.integrity,
    rows: data.rows,
    meta,
    reused: false,
    source,
    brain,
  };
}

function currentState(db: string, wal: string): SourceState {
  const checkedAt = new Date().toISOString();
  const dbId = identityOf(db);
  if (dbId === null) throw new Error('the database file disappeared');
  // An empty WAL holds nothing the db file lacks (readers create one when it is missing): same as none.
  const walId = identityOf(wal);
  return { db: dbId, wal: walId && walId.size > 0 ? walId : null, checkedAt };
}

/** `.meta` is tiny: linked from the previous snapshot when identical, else written and fsynced. */
function copyMeta(source: string, job: SessionJob, prev: ManifestSession | undefined): ManifestFile | null {
  let content: Buffer;
  try {
    content = readFileNoFollow(source); // a planted link is never read for copying
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const sha256 = sha256Of(content);
  const file = `${job.id}.meta`;
  const target = path.join(job.workDir, file);
  const prevMeta = prev?.meta;
  if (
    job.previous &&
    prevMeta &&
    prevMeta.sha256 === sha256 &&
    tryLink(path.join(job.previous.dir, prevMeta.file), target, sha256)
  ) {
    return { file, bytes: content.length, sha256 };
  }
  writeNewFile(target, content, 0o600, { fsync: false });
  job.run.sync.add(target);
  return { file, bytes: content.length, sha256 };
}

function tryLink(from: string, to: string, sha256: string): boolean {
  try {
    if (fs.statSync(from).size > 4096 || sha256File(from) !== sha256) return false;
    fs.linkSync(from, to);
    return true;
  } catch {
    return false;
  }
}

/** A write in the same mtime tick as the last one could leave (size, mtime) unchanged: only trust files quiet this long. */
export const QUIET_MS = 2000;

export interface SourceState {
  db: FileIdentity;
  wal: FileIdentity | null;
  checkedAt: string;
}

export function newestMtime(src: { db: FileIdentity; wal: FileIdentity | null }): number {
  const ms = (f: FileIdentity | null): number => (f === null ? 0 : Number(BigInt(f.mtimeNs) / 1_000_000n));
  return Math.max(ms(src.db), ms(src.wal));
}

/**
 * Reusable when db and WAL are the files the previous snapshot saw, they
 * have been quiet for QUIET_MS now, and were already quiet when that
 * snapshot looked at them (so no same-tick write can hide behind its stat).
 */
export function canReuse(prev: ManifestSession | undefined, now: SourceState, prevDir: string): boolean {
  if (!prev?.source || prev.integrity !== 'ok') return false;
  if (!sameIdentity(prev.source.db, now.db) || !sameIdentity(prev.source.wal, now.wal)) return false;
  const newest = newestMtime(now);
  if (Date.parse(now.checkedAt) - newest <= QUIET_MS) return false;
  if (Date.parse(prev.source.checkedAt) - newest <= QUIET_MS) return false;
  try {
    return fs.statSync(path.join(prevDir, prev.file)).size === prev.bytes;
  } catch {
    return false;
  }
}

/** The previous file, hard-linked (or copied) into the new snapshot; its hash and counts carry over. */
export function reuseFile(prevDir: string, file: string, workDir: string): 'linked' | 'copied' {
  return linkOrCopy(path.join(prevDir, file), path.join(workDir, file));
}

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
 * VACUUM INTO `destDir/.name.<pid>.<random>.tmp` (tempBeside), check and hash it, make it 0600,
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
  const tmp = tempBeside(path.join(destDir, name));
  try {
    const vacuumed = await vacuum(run.pool, source, tmp, busyBudgetMs);
    const checked = vacuumed.checked ?? (await checkAndHash(run.pool, tmp));
    if (checked.integrity !== 'ok')
      throw new SnapshotError(`the snapshot failed integrity_check: ${checked.integrity}`, 'integrity');
    // VACUUM INTO creates it 0644 under umask 022; conversations are private.
    finishFile(tmp, SNAPSHOT_FILE_MODE, { fsync: false });
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
