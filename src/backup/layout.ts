/**
 * The backup directory: `<UTC timestamp>/` for each complete snapshot,
 * `.<timestamp>.<random>.partial/` while a run works, `.<name>.deleting/` while
 * retention removes one, `.lock` while a run holds it. Only a directory with
 * a timestamp name and a manifest.json is a snapshot; anything else in the
 * directory is left alone except our own leftovers.
 *
 * One backup run per backup directory. The lock (util/os/pid-lock.ts) holds
 * the owner's pid, host and process start time; a lock whose owner is gone
 * (pid dead, or reused by another process) is stale and taken over, so a
 * SIGKILLed run never blocks the next one.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { usageError } from '../core/errors.js';
import { takePidLock } from '../util/os/pid-lock.js';
import { processStart, recordedProcessAlive } from '../util/os/process.js';
import { lstatOrNull, unsafeSymlinkError } from '../util/os/safe-fs.js';
import { MANIFEST, ManifestError, type ManifestProblem, readManifest } from './manifest.js';

/** What a fresh server replayed for each session of a snapshot, beside its manifest.json (replay-record.ts). */
export const REPLAY_RECORD = 'replay.json';

const NAME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})Z$/;
const LEFTOVER = /^\.(.+)\.(partial|deleting)$/;

/** `2026-09-03T12-34-56.789Z`: sortable, no colons (rclone and other file systems dislike them). */
export function snapshotName(date: Date): string {
  return date.toISOString().replace(/:/g, '-');
}

export function parseSnapshotName(name: string): Date | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** Random part: nobody who can write the backup directory can plant a link or a directory under the name the run will create. */
export const partialName = (name: string): string => `.${name}.${crypto.randomBytes(6).toString('hex')}.partial`;
export const deletingName = (name: string): string => `.${name}.deleting`;

export interface SnapshotRef {
  name: string;
  dir: string;
  created: Date;
}

/** Complete snapshots, newest first. */
export function listSnapshots(backupDir: string): SnapshotRef[] {
  let names: string[];
  try {
    names = fs.readdirSync(backupDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: SnapshotRef[] = [];
  for (const name of names) {
    const created = parseSnapshotName(name);
    const dir = path.join(backupDir, name);
    // A real directory only: a planted symlink must not make agyctl read (or reuse files from) somewhere else.
    if (created && lstatOrNull(dir)?.isDirectory() && lstatOrNull(path.join(dir, MANIFEST))?.isFile())
      out.push({ name, dir, created });
  }
  return out.sort((a, b) => b.name.localeCompare(a.name));
}

/** One line of `backup list`: a complete snapshot and what its manifest says (null fields: the manifest cannot be read). */
export interface SnapshotSummary {
  name: string;
  path: string;
  created: string;
  host: string | null;
  sessions: number | null;
  /** Sessions the run could not snapshot (a snapshot with failures is still listed). */
  failed: number | null;
  /** Bytes of the files the manifest lists: databases, .meta files, brain files. */
  bytes: number | null;
  /** A replay.json is there: `--prove` recorded what a fresh server replayed. */
  proven: boolean;
  /** Why the manifest cannot be read (then `backup verify` says more); null when it can. */
  problem: string | null;
  /** What kind of problem: a newer agyctl's, permissions, or a damaged or foreign manifest; null when it can be read. */
  problemKind: ManifestProblem | null;
}

/** The complete snapshots in `backupDir`, newest first, from their manifests (nothing is re-hashed: that is verify's job). */
export function summarizeSnapshots(backupDir: string): SnapshotSummary[] {
  return listSnapshots(backupDir).map((ref): SnapshotSummary => {
    const base = { name: ref.name, path: ref.dir, created: ref.created.toISOString() };
    const proven = lstatOrNull(path.join(ref.dir, REPLAY_RECORD))?.isFile() === true;
    try {
      const m = readManifest(ref.dir);
      const bytes = m.sessions.reduce(
        (sum, s) => sum + s.bytes + (s.meta?.bytes ?? 0) + (s.brain?.files ?? []).reduce((b, f) => b + f.bytes, 0),
        0,
      );
      return {
        ...base,
        host: m.host,
        sessions: m.sessions.length,
        failed: m.failed.length,
        bytes,
        proven,
        problem: null,
        problemKind: null,
      };
    } catch (err) {
      return {
        ...base,
        host: null,
        sessions: null,
        failed: null,
        bytes: null,
        proven,
        problem: (err as Error).message,
        problemKind: err instanceof ManifestError ? err.problem : 'unreadable',
      };
    }
  });
}

/** Remove what interrupted runs left (`.partial`, `.deleting`). Call only while holding the lock. */
export function removeLeftovers(backupDir: string): string[] {
  const removed: string[] = [];
  for (const name of fs.readdirSync(backupDir)) {
    if (!LEFTOVER.test(name)) continue;
    fs.rmSync(path.join(backupDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** A fresh snapshot name: never reuse an existing one, even if the clock stepped back. */
export function freshName(backupDir: string, now: Date): string {
  const entries = new Set(fs.readdirSync(backupDir));
  const taken = (name: string): boolean =>
    entries.has(name) || [...entries].some((e) => e.startsWith(`.${name}.`) && e.endsWith('.partial'));
  let t = now.getTime();
  for (;;) {
    // From the listing, so a dangling link planted under the next name counts as taken.
    const name = snapshotName(new Date(t));
    if (!taken(name)) return name;
    t += 1;
  }
}

interface LockInfo {
  pid: number;
  host: string;
  procStart: string | null;
  since: string;
}

export interface Lock {
  file: string;
  release(): void;
}

export function acquireLock(dir: string): Lock {
  const file = path.join(dir, '.lock');
  const mine: LockInfo = {
    pid: process.pid,
    host: os.hostname(),
    procStart: processStart(process.pid) ?? null,
    since: new Date().toISOString(),
  };
  const lock = takePidLock(file, {
    content: `${JSON.stringify(mine)}\n`,
    parse: parseLock,
    alive: isAlive,
    unnamedGraceMs: 10_000, // being written by a run that just started
    inspect: refuseForeign,
  });
  if (lock.taken) return { file, release: lock.release };
  const holder = lock.holder;
  if (lock.why === 'held' && holder) {
    const where = holder.host === mine.host ? `pid ${holder.pid}` : `pid ${holder.pid} on ${holder.host}`;
    throw usageError(
      `Another backup into ${dir} is running (${where}, since ${holder.since}).`,
      `wait for it to finish; if it is really gone, remove ${file}`,
    );
  }
  throw usageError(
    `Another backup into ${dir} just started (pid ${holder?.pid ?? 'unknown'}).`,
    'wait for it to finish',
  );
}

/** Our lock is always a regular file: a symlink (or FIFO...) there was planted; name it instead of following it. */
function refuseForeign(file: string): void {
  const st = lstatOrNull(file);
  if (st?.isSymbolicLink()) throw unsafeSymlinkError(file, 'the backup lock file');
  if (st && !st.isFile())
    throw usageError(`${file} is not a regular file, so it is not agyctl's lock.`, `remove it: rm ${file}`);
}

function parseLock(text: string): LockInfo | undefined {
  try {
    const info = JSON.parse(text) as Partial<LockInfo>;
    if (typeof info.pid !== 'number') return undefined;
    return {
      pid: info.pid,
      host: String(info.host ?? ''),
      procStart: info.procStart ?? null,
      since: String(info.since ?? 'unknown'),
    };
  } catch {
    return undefined; // half-written or not ours: names no holder
  }
}

/** A lock from another host cannot be checked from here: assume its owner lives. */
function isAlive(info: LockInfo): boolean {
  return info.host !== os.hostname() || recordedProcessAlive(info.pid, info.procStart);
}
