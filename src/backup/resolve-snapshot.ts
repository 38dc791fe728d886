/** SNAPSHOT arguments: a directory path, a snapshot name inside the backup dir, or `latest`. */
import fs from 'node:fs';
import path from 'node:path';
import { usageError } from '../core/errors.js';
import { listSnapshots } from './layout.js';
import { MANIFEST } from './manifest.js';
import { type SnapshotSource, snapshotsOf } from './source.js';

/** `latest` is the newest snapshot of `source` (the state dir the command works on): another state dir's never counts. */
export function resolveSnapshot(arg: string, backupDir: string, cwd: string, source: SnapshotSource): string {
  if (arg === 'latest') {
    const newest = snapshotsOf(backupDir, source)[0];
    if (!newest) {
      const others = listSnapshots(backupDir).length;
      throw usageError(
        `No complete snapshot of ${source.stateDir} in ${backupDir}${others > 0 ? ` (${others} of other state dirs)` : ''}.`,
        'run `agyctl backup` first, or name the snapshot directory',
      );
    }
    return newest.dir;
  }
  const candidates = [path.resolve(cwd, arg), path.join(backupDir, arg)];
  const dir = candidates.find((c) => isDir(c));
  if (!dir)
    throw usageError(
      `No snapshot ${arg} (looked at ${candidates.join(' and ')}).`,
      'give a snapshot directory, its name in the backup dir, or `latest`',
    );
  if (/\.(partial|deleting)$/.test(dir))
    throw usageError(
      `${dir} is an unfinished snapshot from an interrupted run.`,
      'pick a complete snapshot; the next `agyctl backup` removes this leftover',
    );
  if (!fs.existsSync(path.join(dir, MANIFEST)))
    throw usageError(`${dir} is not a snapshot (no ${MANIFEST}).`, 'give a directory that `agyctl backup` created');
  return dir;
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
