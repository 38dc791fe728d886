/**
 * `agyctl backup`: every conversation into `DIR/<UTC timestamp>/`.
 *
 * The run works in `DIR/.<timestamp>.partial/` and renames it only once every
 * file and the manifest are written and fsynced, so an interrupted run never
 * looks like a snapshot (the next run removes the leftover). Retention runs
 * only after the new snapshot is complete.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgyError, EXIT, InterruptedError, usageError } from '../core/errors.js';
import { describeUnrecognised, unrecognisedEntries } from '../core/paths.js';
import type { Reporter } from '../core/reporter.js';
import { agyctlVersion } from '../core/version.js';
import { fsyncDir } from '../util/os/atomic-write.js';
import { sanitizeForTerminal } from '../util/terminal-text.js';
import { backupSession, type Previous, type SnapshotRun } from './backup-session.js';
import { conversationsDir, discoverSessions, noConversationsDirectory, type SessionInfo } from './discover.js';
import { errorText, isNoSpace, noSpaceText, SyncBatch, sameIdentity } from './files.js';
import { acquireLock, freshName, listSnapshots, partialName, removeLeftovers } from './layout.js';
import {
  MANIFEST_SCHEMA,
  type Manifest,
  type ManifestFailure,
  type ManifestSession,
  readManifest,
  sessionFiles,
  writeManifest,
} from './manifest.js';
import { Progress } from './progress.js';
import type { RetentionPolicy } from './retention.js';
import { applyRetention, type RetentionResult } from './retention.js';
import { runBounded, WorkerPool } from './worker-pool.js';

/** One worker per core (more only add contention), at most 8 (memory, and the disk is shared anyway). */
export function defaultJobs(): number {
  return Math.max(1, Math.min(8, os.availableParallelism()));
}

export interface BackupOptions {
  stateDir: string;
  backupDir: string;
  sessionIds: string[];
  retention: RetentionPolicy;
  busyBudgetMs: number;
  /** Sessions snapshotted at once (worker threads); default: the cores, at most 8. */
  jobs?: number;
  signal: AbortSignal;
  out: Reporter;
  /**
   * Root on a user's state dir: the snapshot's files and manifest come from
   * the owner's side (its archive, hash-checked into `workDir`), never from
   * root reading that user's tree. Nothing is reused then.
   */
  snapshotFrom?: (workDir: string) => Promise<Manifest>;
}

export interface BackupReport {
  backupDir: string;
  snapshot: { name: string; path: string; created: string };
  sessions: ManifestSession[];
  failed: ManifestFailure[];
  cleanedUp: string[];
  retention: RetentionResult | null;
  elapsedMs: number;
}

export async function runBackup(opts: BackupOptions): Promise<BackupReport> {
  const started = Date.now();
  const sessions = opts.snapshotFrom ? [] : withoutStrays(opts, selectSessions(opts.stateDir, opts.sessionIds));
  fs.mkdirSync(opts.backupDir, { recursive: true, mode: 0o700 });
  const lock = acquireLock(opts.backupDir);
  try {
    const cleanedUp = removeLeftovers(opts.backupDir);
    const previous = loadPrevious(opts.backupDir, opts.out);
    const created = new Date();
    const name = freshName(opts.backupDir, created);
    const manifest = await writeSnapshot(opts, sessions, previous, name, created);
    const retention = applyRetention(opts.backupDir, opts.retention, name, manifest.failed.length, opts.out);
    const dir = path.join(opts.backupDir, name);
    return {
      backupDir: opts.backupDir,
      snapshot: { name, path: dir, created: manifest.created },
      sessions: manifest.sessions,
      failed: manifest.failed,
      cleanedUp,
      retention,
      elapsedMs: Date.now() - started,
    };
  } finally {
    lock.release();
  }
}

function selectSessions(stateDir: string, ids: string[]): SessionInfo[] {
  const all = discoverSessions(stateDir, { holders: false });
  if (all === undefined) throw noConversationsDirectory(stateDir);
  if (ids.length === 0) return all;
  const wanted = [...new Set(ids)];
  const missing = wanted.filter((id) => !all.some((s) => s.id === id));
  if (missing.length > 0)
    throw usageError(`No conversation ${missing.join(', ')} in ${stateDir}.`, 'run `agyctl sessions` to list the ids');
  return all.filter((s) => wanted.includes(s.id));
}

/**
 * RC01's file naming is a fact of the reference, not a law (docs/assumptions.md):
 * files named otherwise, and a stem with no database and no WAL (a `.meta`
 * alone, as a build that names its databases otherwise leaves), are named
 * in a note and left alone, never counted as a failed session.
 */
function withoutStrays(opts: BackupOptions, sessions: SessionInfo[]): SessionInfo[] {
  const unrecognised = unrecognisedEntries(conversationsDir(opts.stateDir));
  if (unrecognised.length > 0) opts.out.warn(describeUnrecognised(unrecognised));
  const strays = sessions.filter((s) => s.db === null && s.wal === null && !/symlink/.test(s.problem ?? ''));
  if (strays.length > 0)
    opts.out.warn(
      `${strays.map((s) => s.id).join(', ')}: no database beside ${strays.length === 1 ? 'its' : 'their'} other files (a .meta or -shm alone); nothing to back up`,
    );
  return sessions.filter((s) => !strays.includes(s));
}

/** The newest complete snapshot whose manifest reads, for reuse. */
function loadPrevious(backupDir: string, out: Reporter): Previous | undefined {
  for (const snap of listSnapshots(backupDir)) {
    try {
      const m = readManifest(snap.dir);
      return { name: snap.name, dir: snap.dir, sessions: new Map(m.sessions.map((s) => [s.id, s])) };
    } catch (err) {
      out.warn(`skipping ${snap.name} for reuse: ${errorText(err)}`);
    }
  }
  return undefined;
}

async function writeSnapshot(
  opts: BackupOptions,
  sessions: SessionInfo[],
  previous: Previous | undefined,
  name: string,
  created: Date,
): Promise<Manifest> {
  const work = path.join(opts.backupDir, partialName(name));
  fs.mkdirSync(work, { mode: 0o700 });
  try {
    const manifest = opts.snapshotFrom ? await received(opts.snapshotFrom, work) : newManifest(opts.stateDir, created);
    if (!opts.snapshotFrom) {
      const sync = new SyncBatch();
      await backupAll(opts, sessions, previous, work, manifest, sync);
      await sync.flush();
    }
    writeManifest(work, manifest);
    fsyncDir(work);
    fs.renameSync(work, path.join(opts.backupDir, name));
    fsyncDir(opts.backupDir);
    return manifest;
  } catch (err) {
    fs.rmSync(work, { recursive: true, force: true });
    if (isNoSpace(err)) throw writeFailed(opts.backupDir, err);
    throw err;
  }
}

/** The owner's snapshot, received into `work`, every file fsynced before the rename makes it a snapshot. */
async function received(from: (workDir: string) => Promise<Manifest>, work: string): Promise<Manifest> {
  const manifest = await from(work);
  const sync = new SyncBatch();
  for (const s of manifest.sessions)
    for (const { name } of sessionFiles(s)) sync.add(path.join(work, ...name.split('/')));
  await sync.flush();
  return manifest;
}

/**
 * Up to `jobs` sessions at once, their vacuums and checks in a pool of
 * `jobs` worker threads (started only if some session needs a snapshot);
 * the manifest keeps the discovery order whatever order they finish in.
 */
async function backupAll(
  opts: BackupOptions,
  sessions: SessionInfo[],
  previous: Previous | undefined,
  work: string,
  manifest: Manifest,
  sync: SyncBatch,
): Promise<void> {
  const progress = new Progress(
    opts.out,
    sessions.length,
    sessions.reduce((n, s) => n + s.bytes, 0),
  );
  const jobs = opts.jobs ?? defaultJobs();
  const changed = sessions.filter((s) => s.readable && !looksReusable(s, previous)).length;
  // With a single session to snapshot its vacuum runs here, while the workers boot for its checks.
  const pool = new WorkerPool(jobs, { firstVacuumHere: changed === 1 });
  // A session that changed since the previous snapshot needs the workers: boot them while the rest is prepared.
  if (changed > 0) pool.warm();
  const onAbort = (): void => pool.abort();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const one = async (s: SessionInfo): Promise<ManifestSession | ManifestFailure> => {
      progress.start(s.id);
      const result = await backupOne(opts, s, previous, work, { pool, sync });
      progress.advance(s.bytes, s.id);
      return result;
    };
    // Twice as many sessions in flight as workers: while the main thread finishes one (rename, .meta), the workers have the next queued.
    const results = await runBounded(
      sessions,
      jobs * 2,
      one,
      () => opts.signal.aborted,
      () => new InterruptedError(),
    );
    for (const result of results) {
      if ('reason' in result) manifest.failed.push(result);
      else manifest.sessions.push(result);
    }
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    await pool.close();
    progress.finish();
  }
}

async function backupOne(
  opts: BackupOptions,
  s: SessionInfo,
  previous: Previous | undefined,
  work: string,
  run: SnapshotRun,
): Promise<ManifestSession | ManifestFailure> {
  if (!s.readable) return { id: s.id, reason: s.problem ?? 'unreadable' };
  const t0 = Date.now();
  try {
    const entry = await backupSession({
      stateDir: opts.stateDir,
      id: s.id,
      cwd: s.cwd,
      workDir: work,
      previous,
      busyBudgetMs: opts.busyBudgetMs,
      run,
    });
    for (const skipped of entry.brain?.skipped ?? [])
      opts.out.warn(
        sanitizeForTerminal(`${s.id}: brain/${s.id}/${skipped.path} skipped: ${skipped.reason}`, { singleLine: true }),
      );
    opts.out.verbose(
      `${s.id}: ${entry.reused ? `reused from ${entry.reusedFrom}` : `snapshot ${entry.bytes} bytes`} in ${Date.now() - t0} ms`,
    );
    return entry;
  } catch (err) {
    if (isNoSpace(err) || err instanceof InterruptedError) throw err; // the destination is full, or Ctrl-C: stop the whole run
    const reason = errorText(err);
    opts.out.warn(`${s.id}: ${reason}`);
    return { id: s.id, reason };
  }
}

/** A cheap guess (stat only) whether a session will be reused; backupSession decides for real. */
function looksReusable(s: SessionInfo, previous: Previous | undefined): boolean {
  const prev = previous?.sessions.get(s.id);
  return (
    prev?.source !== undefined &&
    sameIdentity(prev.source.db, s.db) &&
    sameIdentity(prev.source.wal, s.wal && s.wal.size > 0 ? s.wal : null)
  );
}

function newManifest(stateDir: string, created: Date): Manifest {
  return {
    schemaVersion: MANIFEST_SCHEMA,
    kind: 'agyctl-backup',
    created: created.toISOString(),
    host: os.hostname(),
    agyctlVersion: agyctlVersion(),
    sourceStateDir: stateDir,
    sessions: [],
    failed: [],
  };
}

function writeFailed(backupDir: string, err: unknown): AgyError {
  return new AgyError(
    EXIT.findings,
    'backup-write-failed',
    `Could not write the snapshot into ${backupDir}: ${noSpaceText(err)}. The unfinished snapshot was removed; earlier snapshots are untouched.`,
    {
      hint: 'free space on that file system (or raise its quota / file-size limit), or use --to DIR on a bigger disk',
      cause: err,
    },
  );
}
