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
import { unrecognisedEntries } from '../core/paths.js';
import { agyctlVersion } from '../core/runtime.js';
import { fsyncDir } from '../util/os/atomic-write.js';
import { mkdirsSayingWhy } from '../util/os/safe-fs.js';
import { backupSession, type Previous, type SnapshotInProgress } from './backup-session.js';
import { conversationsDir, discoverSessions, noConversationsDirectory, type SessionInfo } from './discover.js';
import { errorText, isNoSpace, noSpaceText } from './error-text.js';
import type { RetentionEvent, RunEvent } from './events.js';
import { sameIdentity } from './file-identity.js';
import { acquireLock, freshName, partialName, removeLeftovers } from './layout.js';
import {
  MANIFEST_SCHEMA,
  type Manifest,
  type ManifestFailure,
  type ManifestSession,
  type ManifestSource,
  readManifest,
  sessionFiles,
  writeManifest,
} from './manifest.js';
import { adoptReused, nothingReused } from './owner-reuse.js';
import { applyRetention, type RetentionOptions, type RetentionResult } from './retention.js';
import { SyncBatch } from './snapshot-files.js';
import { type SnapshotSource, snapshotsOf, sourceOf } from './source.js';
import { runBounded, WorkerPool } from './worker-pool.js';

/** One worker per core (more only add contention), at most 8 (memory, and the disk is shared anyway). */
export function defaultJobs(): number {
  return Math.max(1, Math.min(8, os.availableParallelism()));
}

/**
 * What a snapshot run reads, checked once from `agyctl backup`'s flags
 * (cli/commands/backup/handler.ts); what acts around the run (--dry-run,
 * --archive, --prometheus, --prove, --max-bytes) stays with the handler.
 * `sessions export` and the owner's side of root's backup fill it for a copy.
 */
export interface BackupOptions extends RetentionOptions {
  /** The state dir whose conversations are snapshotted (--state-dir). */
  stateDir: string;
  /** --session: only these conversations (none: all). */
  sessionIds: string[];
  /** --busy-timeout. */
  busyBudgetMs: number;
  /** --compact: VACUUM INTO every snapshot made now, whatever its free pages. */
  compact?: boolean;
  /** Sessions snapshotted at once (worker threads); undefined: the cores, at most 8. */
  jobs: number | undefined;
}

/** What a run adds to its options: how it is stopped, where its events go, and where its snapshot comes from. */
export interface BackupRun {
  signal: AbortSignal;
  /** What the run tells a person as it goes (events.ts). */
  emit: (event: RunEvent | RetentionEvent) => void;
  /** A progress line for `sessions` sessions of `bytes` in all, told as each one starts and ends; none: no line. */
  progress?: (sessions: number, bytes: number) => SessionProgress;
  /**
   * Root on a user's state dir: the snapshot's files and manifest come from
   * the owner's side (its archive, hash-checked into `workDir`), never from
   * root reading that user's tree. Given root's previous snapshot of that
   * state dir, the owner's side leaves out the databases it finds unchanged,
   * marked reused; root checks each against `previous` (owner-reuse.ts).
   */
  snapshotFrom?: (workDir: string, previous: Previous | undefined) => Promise<Manifest>;
  /** The owner's side of root's backup: root's previous snapshot as root described it (owner-reuse.ts). */
  previous?: Previous;
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

export async function runBackup(options: BackupOptions, run: BackupRun): Promise<BackupReport> {
  const started = Date.now();
  const sessions = run.snapshotFrom ? [] : withoutStrays(options.stateDir, selectSessions(options), run.emit);
  mkdirsSayingWhy(options.backupDir);
  const lock = acquireLock(options.backupDir);
  try {
    const cleanedUp = removeLeftovers(options.backupDir);
    const previous = run.previous ?? loadPrevious(options.backupDir, sourceOf(options.stateDir), run.emit);
    const created = new Date();
    const name = freshName(options.backupDir, created);
    const manifest = await writeSnapshot({ options, run, previous, name, created }, sessions);
    const retention = applyRetention(options, name, manifest.failed.length, run.emit);
    const dir = path.join(options.backupDir, name);
    return {
      backupDir: options.backupDir,
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

function selectSessions({ stateDir, sessionIds }: BackupOptions): SessionInfo[] {
  const all = discoverSessions(stateDir, { holders: false });
  if (all === undefined) throw noConversationsDirectory(stateDir);
  if (sessionIds.length === 0) return all;
  const wanted = [...new Set(sessionIds)];
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
function withoutStrays(stateDir: string, sessions: SessionInfo[], emit: BackupRun['emit']): SessionInfo[] {
  const unrecognised = unrecognisedEntries(conversationsDir(stateDir));
  if (unrecognised.length > 0) emit({ type: 'unrecognised-entries', entries: unrecognised });
  const strays = sessions.filter((s) => s.db === null && s.wal === null && !/symlink/.test(s.problem ?? ''));
  if (strays.length > 0) emit({ type: 'no-database', ids: strays.map((s) => s.id) });
  return sessions.filter((s) => !strays.includes(s));
}

/** How far a run is, for the caller to draw (cli/commands/backup/progress.ts). */
export interface SessionProgress {
  start(id: string): void;
  /** One session finished (whatever the outcome), `bytes` of source accounted. */
  advance(bytes: number, id: string): void;
  finish(): void;
}

/** The newest complete snapshot whose manifest reads, for reuse. */
function loadPrevious(backupDir: string, source: SnapshotSource, emit: BackupRun['emit']): Previous | undefined {
  for (const snap of snapshotsOf(backupDir, source)) {
    try {
      const m = readManifest(snap.dir);
      return { name: snap.name, dir: snap.dir, sessions: new Map(m.sessions.map((s) => [s.id, s])) };
    } catch (err) {
      emit({ type: 'reuse-skipped', snapshot: snap.name, error: errorText(err) });
    }
  }
  return undefined;
}

/** The snapshot a run writes: its name and time, and the complete snapshot it may reuse from. */
interface NewSnapshot {
  options: BackupOptions;
  run: BackupRun;
  previous: Previous | undefined;
  name: string;
  created: Date;
}

async function writeSnapshot(snap: NewSnapshot, sessions: SessionInfo[]): Promise<Manifest> {
  const { options, run } = snap;
  const work = path.join(options.backupDir, partialName(snap.name));
  fs.mkdirSync(work, { mode: 0o700 });
  try {
    const manifest = run.snapshotFrom
      ? { ...(await received(run.snapshotFrom, work, snap.previous, run.emit)), ...sourceFields(options.stateDir) }
      : newManifest(options.stateDir, snap.created);
    if (!run.snapshotFrom) {
      const sync = new SyncBatch();
      await backupAll(snap, sessions, { workDir: work, previous: snap.previous, sync, manifest });
      await sync.flush();
    }
    writeManifest(work, manifest);
    fsyncDir(work);
    fs.renameSync(work, path.join(options.backupDir, snap.name));
    fsyncDir(options.backupDir);
    return manifest;
  } catch (err) {
    fs.rmSync(work, { recursive: true, force: true });
    if (isNoSpace(err)) throw writeFailed(options.backupDir, err);
    throw err;
  }
}

/**
 * The owner's snapshot, received into `work`, every file fsynced before the
 * rename makes it a snapshot. Sessions sent as reused are checked against
 * root's previous snapshot and linked from it; when a claim does not hold,
 * everything is received again, in full.
 */
async function received(
  from: NonNullable<BackupRun['snapshotFrom']>,
  work: string,
  previous: Previous | undefined,
  emit: BackupRun['emit'],
): Promise<Manifest> {
  let manifest = await from(work, previous);
  if (previous && !adoptReused(manifest, work, previous)) {
    emit({ type: 'owner-reuse-refused' });
    for (const name of fs.readdirSync(work)) fs.rmSync(path.join(work, name), { recursive: true, force: true });
    manifest = nothingReused(await from(work, undefined));
  } else if (!previous) nothingReused(manifest);
  const sync = new SyncBatch();
  for (const s of manifest.sessions)
    for (const { name } of sessionFiles(s)) sync.add(path.join(work, ...name.split('/')));
  await sync.flush();
  return manifest;
}

/**
 * Up to `jobs` sessions at once, their copies and checks in a pool of
 * `jobs` worker threads (started only if some session needs a snapshot);
 * the manifest keeps the discovery order whatever order they finish in.
 */
async function backupAll(
  snap: NewSnapshot,
  sessions: SessionInfo[],
  into: Omit<SnapshotInProgress, 'pool'> & { manifest: Manifest },
): Promise<void> {
  const { options, run } = snap;
  const progress = run.progress?.(
    sessions.length,
    sessions.reduce((n, s) => n + s.bytes, 0),
  );
  const jobs = options.jobs ?? defaultJobs();
  const changed = sessions.filter((s) => s.readable && !looksReusable(s, snap.previous)).length;
  // With a single session to snapshot, its copy and hash run here and one worker checks it.
  const pool = changed === 1 ? new WorkerPool(1, { oneSession: true }) : new WorkerPool(jobs);
  // A session that changed since the previous snapshot needs the workers: boot them while the rest is prepared.
  if (changed > 0) pool.warm();
  const onAbort = (): void => pool.abort();
  run.signal.addEventListener('abort', onAbort, { once: true });
  const inProgress: SnapshotInProgress = { workDir: into.workDir, previous: into.previous, sync: into.sync, pool };
  try {
    const one = async (s: SessionInfo): Promise<ManifestSession | ManifestFailure> => {
      progress?.start(s.id);
      const result = await backupOne(snap, s, inProgress);
      progress?.advance(s.bytes, s.id);
      return result;
    };
    // Twice as many sessions in flight as workers: while the main thread finishes one (rename, .meta), the workers have the next queued.
    const results = await runBounded(sessions, jobs * 2, one, {
      stop: () => run.signal.aborted,
      stopped: () => new InterruptedError(),
    });
    for (const result of results) {
      if ('reason' in result) into.manifest.failed.push(result);
      else into.manifest.sessions.push(result);
    }
  } finally {
    run.signal.removeEventListener('abort', onAbort);
    await pool.close();
    progress?.finish();
  }
}

async function backupOne(
  { options, run }: NewSnapshot,
  s: SessionInfo,
  snapshot: SnapshotInProgress,
): Promise<ManifestSession | ManifestFailure> {
  if (!s.readable) return { id: s.id, reason: s.problem ?? 'unreadable' };
  const t0 = Date.now();
  try {
    const entry = await backupSession(options, s, snapshot);
    for (const skipped of entry.brain?.skipped ?? [])
      run.emit({ type: 'brain-file-skipped', id: s.id, path: skipped.path, reason: skipped.reason });
    run.emit({ type: 'session-done', session: entry, ms: Date.now() - t0 });
    return entry;
  } catch (err) {
    if (isNoSpace(err) || err instanceof InterruptedError) throw err; // the destination is full, or Ctrl-C: stop the whole run
    const reason = errorText(err);
    run.emit({ type: 'session-failed', id: s.id, reason });
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
    agyctlVersion: agyctlVersion(),
    ...sourceFields(stateDir),
    sessions: [],
    failed: [],
  };
}

/** The manifest's record of which state dir this is a snapshot of (source.ts); root sets it itself for an owner's snapshot. */
function sourceFields(stateDir: string): ManifestSource {
  const source = sourceOf(stateDir);
  return {
    sourceStateDir: source.stateDir,
    sourceRealpath: source.realpath,
    ...(source.uid === -1 ? {} : { sourceUid: source.uid }),
    host: source.host,
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
