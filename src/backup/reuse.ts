/**
 * Reusing an unchanged session from the previous complete snapshot instead of
 * vacuuming it again. (inode, size, mtime) of the db and of the WAL caught
 * every commit in a stress test; `PRAGMA data_version` resets per connection
 * and ctime is touched by readers, so neither helps.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type FileIdentity, linkOrCopy, sameIdentity } from './files.js';
import type { ManifestSession } from './manifest.js';

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
