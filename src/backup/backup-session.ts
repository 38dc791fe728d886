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
 * Snapshot: one consistent copy of a live conversation database: its db
 * and WAL copied where the snapshot will be and checked to be one state
 * (live-copy.ts), the WAL checkpointed into the copy, which is then the
 * snapshot (compacted by VACUUM INTO only when that pays). A file copy of
 * the .db alone reads empty while the schema still sits in the WAL, and
 * `cp` racing a checkpoint gives corrupt copies: hence the checks. SQLite's
 * step-wise online backup is not used: it restarts on every commit of a
 * live writer and never finishes.
 *
 * The steps run in the run's worker pool (worker-pool.ts): the copy of one
 * session in one worker while other sessions use the others, and the
 * checks of a large fresh copy split so integrity_check + row counts and
 * sha256 run at the same time on two threads while the copy is fsynced;
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
import type { SessionInfo } from './discover.js';
import { type FileIdentity, identityOf, sameIdentity } from './file-identity.js';
import type { ManifestFile, ManifestSession } from './manifest.js';
import { linkOrCopy, SNAPSHOT_FILE_MODE, type SyncBatch } from './snapshot-files.js';
import { type CheckedCopy, type Copied, removeTemp, SnapshotError } from './snapshot-work.js';
import type { WorkerPool } from './worker-pool.js';

export interface Previous {
  name: string;
  dir: string;
  sessions: Map<string, ManifestSession>;
  /**
   * The previous snapshot is root's, in root's backup dir, which this run (the
   * owner's side of root's backup) cannot see: `sessions` is what root told it.
   * An unchanged session is then recorded as reused with no file here (root
   * links its own, checked: cli/commands/backup/as-owner.ts); .meta and brain
   * files are copied afresh.
   */
  remote?: boolean;
}

/** How one database is copied: how long to retry a busy one (--busy-timeout), and --compact. */
export interface CopyPolicy {
  busyBudgetMs: number;
  compact?: boolean;
}

/** What a run's options say about each session: where it is, and how it is copied. */
export interface SessionOptions extends CopyPolicy {
  stateDir: string;
}

/** Where a snapshot's work runs: the worker pool (vacuums and checks) and the background fsyncs. */
export interface SnapshotWorkers {
  pool: WorkerPool;
  /** Flushed before the snapshot is renamed into place. */
  sync: SyncBatch;
}

/** One run's snapshot while it is written: its work directory and the complete snapshot it may reuse from. */
export interface SnapshotInProgress extends SnapshotWorkers {
  workDir: string;
  previous: Previous | undefined;
}

/** The run's options (state dir, --busy-timeout) and one session of it, into `snapshot`. */
export async function backupSession(
  options: SessionOptions,
  session: SessionInfo,
  snapshot: SnapshotInProgress,
): Promise<ManifestSession> {
  try {
    return await backupFiles(options, session, snapshot);
  } catch (err) {
    // A failed session leaves nothing behind in the snapshot: no db or .meta without a manifest entry.
    for (const f of [`${session.id}.db`, `${session.id}.meta`, path.join('brain', session.id)])
      fs.rmSync(path.join(snapshot.workDir, f), { recursive: true, force: true });
    throw err;
  }
}

async function backupFiles(
  options: SessionOptions,
  session: SessionInfo,
  snapshot: SnapshotInProgress,
): Promise<ManifestSession> {
  const { id } = session;
  const files = conversationFiles(options.stateDir, id);
  // Stat before the snapshot: a commit landing during the copy makes the next run see a change, never miss one.
  const source = currentState(files.db, files.wal);
  const brainScan = scanBrain(options.stateDir, id);
  const previous = snapshot.previous;
  const prev = previous?.sessions.get(id);
  const name = `${id}.db`;
  if (previous?.remote && prev && canReuse(prev, source, undefined)) {
    const meta = copyMeta(files.meta, id, snapshot);
    const brain = brainOf(brainScan, id, snapshot);
    return { ...entry(session, name, prev, { meta, source, brain }), reused: true, reusedFrom: previous.name };
  }
  if (previous && !previous.remote && prev && canReuse(prev, source, previous.dir)) {
    reuseFile(previous.dir, prev.file, snapshot.workDir);
    if (prev.file !== name) fs.renameSync(path.join(snapshot.workDir, prev.file), path.join(snapshot.workDir, name));
    const meta = copyMeta(files.meta, id, snapshot);
    const brain = brainOf(brainScan, id, snapshot);
    return { ...entry(session, name, prev, { meta, source, brain }), reused: true, reusedFrom: previous.name };
  }
  const snap = await snapshotDb(files.db, path.join(snapshot.workDir, name), options, snapshot);
  const meta = copyMeta(files.meta, id, snapshot);
  const brain = brainOf(brainScan, id, snapshot);
  return entry(session, name, snap, { meta, source, brain });
}

function brainOf(scan: BrainScan | null, id: string, snapshot: SnapshotInProgress): ManifestBrain | null {
  if (scan === null) return null;
  const prev = snapshot.previous?.remote ? undefined : snapshot.previous?.sessions.get(id);
  const previous =
    snapshot.previous && prev ? { dir: snapshot.previous.dir, brain: prev.brain ?? undefined } : undefined;
  return copyBrain(scan, { id, workDir: snapshot.workDir, previous, sync: snapshot.sync });
}

/** What a session's entry says of its database: from the snapshot just made, or the previous entry when reused. */
interface DbFacts {
  bytes: number;
  sha256: string;
  integrity: string;
  rows: Record<string, number>;
  compacted?: boolean | undefined;
}

/** What a session's entry records beside its database. */
interface BesideDb {
  meta: ManifestFile | null;
  source: SourceState;
  brain: ManifestBrain | null;
}

function entry(session: SessionInfo, file: string, data: DbFacts, beside: BesideDb): ManifestSession {
  return {
    id: session.id,
    cwd: session.cwd,
    file,
    bytes: data.bytes,
    sha256: data.sha256,
    integrity: data.integrity,
    rows: data.rows,
    ...(data.compacted === undefined ? {} : { compacted: data.compacted }),
    meta: beside.meta,
    reused: false,
    source: beside.source,
    brain: beside.brain,
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
function copyMeta(source: string, id: string, snapshot: SnapshotInProgress): ManifestFile | null {
  let content: Buffer;
  try {
    content = readFileNoFollow(source); // a planted link is never read for copying
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const sha256 = sha256Of(content);
  const file = `${id}.meta`;
  const target = path.join(snapshot.workDir, file);
  const previous = snapshot.previous?.remote ? undefined : snapshot.previous;
  const prevMeta = previous?.sessions.get(id)?.meta;
  if (
    previous &&
    prevMeta &&
    prevMeta.sha256 === sha256 &&
    tryLink(path.join(previous.dir, prevMeta.file), target, sha256)
  ) {
    return { file, bytes: content.length, sha256 };
  }
  writeNewFile(target, content, 0o600, { fsync: false });
  snapshot.sync.add(target);
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

export function newestMtime(src: SourceState): number {
  const ms = (f: FileIdentity | null): number => (f === null ? 0 : Number(BigInt(f.mtimeNs) / 1_000_000n));
  return Math.max(ms(src.db), ms(src.wal));
}

/**
 * Reusable when db and WAL are the files the previous snapshot saw, they
 * have been quiet for QUIET_MS now, and were already quiet when that
 * snapshot looked at them (so no same-tick write can hide behind its stat),
 * and (with `prevDir`) its file is still there at its size.
 */
export function canReuse(prev: ManifestSession | undefined, now: SourceState, prevDir: string | undefined): boolean {
  if (!prev?.source || prev.integrity !== 'ok') return false;
  if (!sameIdentity(prev.source.db, now.db) || !sameIdentity(prev.source.wal, now.wal)) return false;
  const newest = newestMtime(now);
  if (Date.parse(now.checkedAt) - newest <= QUIET_MS) return false;
  if (Date.parse(prev.source.checkedAt) - newest <= QUIET_MS) return false;
  if (prevDir === undefined) return true;
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

export interface SnapshotResult extends CheckedCopy {
  bytes: number;
  attempts: number;
  compacted: boolean;
}

const SPLIT_FROM_BYTES = 8 * 1024 * 1024;

/**
 * The private copy of `source` made as `.<name of dest>.<pid>.<random>.tmp`
 * beside `dest` (tempBeside) and made a snapshot there (snapshot-work.ts),
 * checked and hashed, made 0600, renamed to `dest` and handed to the run's
 * SyncBatch. A source database (or its `-wal`/`-shm`) that is a symlink is
 * refused. `dest`'s directory must be one agyctl just created (the run's
 * private work dir, fsynced by the run before it becomes a snapshot); the
 * random name is a second guard.
 */
export async function snapshotDb(
  source: string,
  dest: string,
  options: CopyPolicy,
  run: SnapshotWorkers,
): Promise<SnapshotResult> {
  for (const f of [source, `${source}-wal`, `${source}-shm`]) assertNotSymlink(f, 'a conversation database file');
  const destDir = path.dirname(dest);
  assertPrivateDir(destDir);
  const tmp = tempBeside(dest);
  try {
    const copied = await copyInto(run.pool, source, tmp, options);
    const checked = copied.checked ?? (await checkAndHash(run.pool, tmp));
    if (checked.integrity !== 'ok')
      throw new SnapshotError(`the snapshot failed integrity_check: ${checked.integrity}`, 'integrity');
    // A VACUUM INTO output is made 0644 under umask 022; conversations are private.
    finishFile(tmp, SNAPSHOT_FILE_MODE, { fsync: false });
    assertPrivateDir(destDir);
    fs.renameSync(tmp, dest);
    // Again, cheaply, for a large copy fsynced while it was checked: its mode changed since.
    run.sync.add(dest);
    return { ...checked, bytes: copied.bytes, attempts: copied.attempts, compacted: copied.compacted };
  } catch (err) {
    removeTemp(tmp);
    if (run.pool.aborted) throw new InterruptedError();
    throw err;
  }
}

function copyInto(
  pool: WorkerPool,
  source: string,
  tmp: string,
  { busyBudgetMs, compact }: CopyPolicy,
): Promise<Copied> {
  return pool.run<Copied>({
    kind: 'copy',
    source,
    tmp,
    busyBudgetMs,
    ...(compact ? { compact } : {}),
    checkBelowBytes: SPLIT_FROM_BYTES,
  });
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
