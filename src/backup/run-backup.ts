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
import type { Reporter } from '../core/reporter.js';
import { agyctlVersion } from '../core/version.js';
import { fsyncDir } from '../util/atomic-write.js';
import { backupSession, type Previous } from './backup-session.js';
import { discoverSessions, noConversationsDirectory, type SessionInfo } from './discover.js';
import { errorText, isNoSpace, noSpaceText } from './files.js';
import { freshName, listSnapshots, partialName, removeLeftovers } from './layout.js';
import { acquireLock } from './lock.js';
import { MANIFEST_SCHEMA, readManifest, writeManifest, type Manifest, type ManifestFailure, type ManifestSession } from './manifest.js';
import { Progress } from './progress.js';
import { applyRetention, type RetentionResult } from './prune.js';
import type { RetentionPolicy } from './retention.js';

export interface BackupOptions {
  stateDir: string;
  backupDir: string;
  sessionIds: string[];
  retention: RetentionPolicy;
  busyBudgetMs: number;
  signal: AbortSignal;
  out: Reporter;
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
  const sessions = selectSessions(opts.stateDir, opts.sessionIds);
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
    return { backupDir: opts.backupDir, snapshot: { name, path: dir, created: manifest.created }, sessions: manifest.sessions, failed: manifest.failed, cleanedUp, retention, elapsedMs: Date.now() - started };
  } finally {
    lock.release();
  }
}

function selectSessions(stateDir: string, ids: string[]): SessionInfo[] {
  const all = discoverSessions(stateDir);
  if (all === undefined) throw noConversationsDirectory(stateDir);
  if (ids.length === 0) return all;
  const wanted = [...new Set(ids)];
  const missing = wanted.filter((id) => !all.some((s) => s.id === id));
  if (missing.length > 0) throw usageError(`No conversation ${missing.join(', ')} in ${stateDir}.`, 'run `agyctl sessions` to list the ids');
  return all.filter((s) => wanted.includes(s.id));
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

async function writeSnapshot(opts: BackupOptions, sessions: SessionInfo[], previous: Previous | undefined, name: string, created: Date): Promise<Manifest> {
  const work = path.join(opts.backupDir, partialName(name));
  fs.mkdirSync(work, { mode: 0o700 });
  try {
    const manifest = newManifest(opts.stateDir, created);
    await backupAll(opts, sessions, previous, work, manifest);
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

async function backupAll(opts: BackupOptions, sessions: SessionInfo[], previous: Previous | undefined, work: string, manifest: Manifest): Promise<void> {
  const progress = new Progress(opts.out, sessions.length, sessions.reduce((n, s) => n + s.bytes, 0));
  try {
    for (const s of sessions) {
      // Let signal handlers run between sessions (the SQLite work itself is synchronous).
      await new Promise((resolve) => setImmediate(resolve));
      if (opts.signal.aborted) throw new InterruptedError();
      progress.start(s.id);
      const result = await backupOne(opts, s, previous, work);
      if ('reason' in result) manifest.failed.push(result);
      else manifest.sessions.push(result);
      progress.advance(s.bytes, s.id);
    }
  } finally {
    progress.finish();
  }
}

async function backupOne(opts: BackupOptions, s: SessionInfo, previous: Previous | undefined, work: string): Promise<ManifestSession | ManifestFailure> {
  if (!s.readable) return { id: s.id, reason: s.problem ?? 'unreadable' };
  const t0 = Date.now();
  try {
    const entry = await backupSession({ stateDir: opts.stateDir, id: s.id, cwd: s.cwd, workDir: work, previous, busyBudgetMs: opts.busyBudgetMs, signal: opts.signal });
    opts.out.verbose(`${s.id}: ${entry.reused ? `reused from ${entry.reusedFrom}` : `snapshot ${entry.bytes} bytes`} in ${Date.now() - t0} ms`);
    return entry;
  } catch (err) {
    if (isNoSpace(err) || err instanceof InterruptedError) throw err; // the destination is full, or Ctrl-C: stop the whole run
    const reason = errorText(err);
    opts.out.warn(`${s.id}: ${reason}`);
    return { id: s.id, reason };
  }
}

function newManifest(stateDir: string, created: Date): Manifest {
  return { schemaVersion: MANIFEST_SCHEMA, kind: 'agyctl-backup', created: created.toISOString(), host: os.hostname(), agyctlVersion: agyctlVersion(), sourceStateDir: stateDir, sessions: [], failed: [] };
}

function writeFailed(backupDir: string, err: unknown): AgyError {
  return new AgyError(EXIT.findings, 'backup-write-failed', `Could not write the snapshot into ${backupDir}: ${noSpaceText(err)}. The unfinished snapshot was removed; earlier snapshots are untouched.`, {
    hint: 'free space on that file system (or raise its quota / file-size limit), or use --to DIR on a bigger disk',
    cause: err,
  });
}
