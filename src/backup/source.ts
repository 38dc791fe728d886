/**
 * Which state dir a snapshot was taken of: its realpath, its owner's uid and
 * the host (manifest fields `sourceRealpath`, `sourceUid`, `host`). One
 * backup directory may hold snapshots of several state dirs (root's default
 * one does); `latest`, reuse and retention consider only this state dir's,
 * and restore refuses another's unless asked (--from-other-source).
 *
 * A manifest written before these fields existed has an unknown source: it
 * is matched by what it does record (`sourceStateDir` and `host`), and a
 * restore from it is never refused for its source (docs/backup.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { usageError } from '../core/errors.js';
import { listSnapshots, type SnapshotRef } from './layout.js';
import { type Manifest, type ManifestSource, readManifest } from './manifest.js';

export interface SnapshotSource {
  /** The state dir as it was given (`sourceStateDir`). */
  stateDir: string;
  realpath: string;
  uid: number;
  host: string;
}

/** This state dir as a snapshot of it records it (a missing state dir: its path as given, uid unknown as -1). */
export function sourceOf(stateDir: string): SnapshotSource {
  const given = path.resolve(stateDir);
  let realpath = given;
  let uid = -1;
  try {
    realpath = fs.realpathSync(given);
    uid = fs.statSync(realpath).uid;
  } catch {
    // not there (yet): a restore may create it
  }
  return { stateDir: given, realpath, uid, host: os.hostname() };
}

export type SourceMatch = 'same' | 'other' | 'unknown';

/** Whether `m` was taken of `source`: 'unknown' for a manifest without sourceRealpath/sourceUid whose old fields agree. */
export function matchSource(m: ManifestSource, source: SnapshotSource): SourceMatch {
  if (m.host !== source.host) return 'other';
  if (typeof m.sourceRealpath !== 'string' || typeof m.sourceUid !== 'number')
    return path.resolve(String(m.sourceStateDir)) === source.stateDir || m.sourceStateDir === source.realpath
      ? 'unknown'
      : 'other';
  if (m.sourceRealpath !== source.realpath) return 'other';
  return source.uid === -1 || m.sourceUid === source.uid ? 'same' : 'other';
}

/** Complete snapshots of `source` in `backupDir`, newest first (an unreadable manifest is no one's). */
export function snapshotsOf(backupDir: string, source: SnapshotSource): SnapshotRef[] {
  return listSnapshots(backupDir).filter((snap) => {
    try {
      return matchSource(readManifest(snap.dir), source) !== 'other';
    } catch {
      return false;
    }
  });
}

/** Refuses (exit 2) a snapshot of another state dir, unless --from-other-source. */
export function assertSameSource(m: Manifest, source: SnapshotSource, shown: string, allowOther: boolean): void {
  if (allowOther || matchSource(m, source) !== 'other') return;
  const theirs = `${typeof m.sourceRealpath === 'string' ? m.sourceRealpath : m.sourceStateDir} (uid ${typeof m.sourceUid === 'number' ? m.sourceUid : 'unknown'}, host ${m.host})`;
  throw usageError(
    `${shown} is a snapshot of another state dir: ${theirs}, not ${source.realpath} (uid ${source.uid}, host ${source.host}). Nothing was restored.`,
    'restore it on purpose with --from-other-source (moving to a new box or user), or pick a snapshot of this state dir',
  );
}

/**
 * Root backing up a state dir it does not own, with no --to: the default
 * backup dir's subdirectory for that state dir, so no two users' snapshots
 * share one directory (`sources/<uid>-<16 hex of sha256(realpath)>`).
 */
export function keyedBackupDir(defaultDir: string, source: SnapshotSource): string {
  const key = crypto.createHash('sha256').update(source.realpath).digest('hex').slice(0, 16);
  return path.join(defaultDir, 'sources', `${source.uid}-${key}`);
}
