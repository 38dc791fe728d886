/** SNAPSHOT arguments: a directory path, a snapshot name inside the backup dir, or `latest`. */
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { fsAgyError } from '../util/fs-errors.js';
import { listSnapshots } from './layout.js';
import { MANIFEST, ManifestError, manifestAgyError, readManifest } from './manifest.js';
import { type SnapshotSource, snapshotsOf } from './source.js';

/**
 * `latest` is the newest snapshot of `source` (the state dir the command
 * works on): another state dir's never counts. `takesArchive`: the command
 * has --archive (restore); the others are told how to read an archive.
 */
export function resolveSnapshot(
  arg: string,
  backupDir: string,
  cwd: string,
  source: SnapshotSource,
  takesArchive = false,
): string {
  // A snapshot name has no '/': a path (absolute, ./x, ~/x expanded by the handler) is that path only.
  const isPath = arg.includes('/');
  if (!isPath || arg === 'latest') refuseArchiveAsBackupDir(backupDir, takesArchive);
  if (arg === 'latest') {
    const newest = readSnapshots(backupDir, source)[0];
    refuseNewerSnapshot(backupDir, newest?.name);
    if (!newest) {
      const others = listSnapshots(backupDir).length;
      throw usageError(
        `No complete snapshot of ${source.stateDir} in ${backupDir}${others > 0 ? ` (${others} of other state dirs)` : ''}.`,
        'run `agyctl backup` first, or name the snapshot directory',
      );
    }
    return newest.dir;
  }
  // `DIR/latest`, as `ls` shows a backup dir: the newest snapshot in DIR.
  if (isPath && path.basename(arg) === 'latest' && !exists(path.resolve(cwd, arg)))
    return resolveSnapshot('latest', path.dirname(path.resolve(cwd, arg)), cwd, source, takesArchive);
  const candidates = isPath ? [path.resolve(cwd, arg)] : [path.resolve(cwd, arg), path.join(backupDir, arg)];
  const dir = candidates.find((c) => isDir(c));
  if (!dir) throw noSnapshot(arg, candidates, backupDir, takesArchive);
  if (/\.(partial|deleting)$/.test(dir))
    throw usageError(
      `${dir} is an unfinished snapshot from an interrupted run.`,
      'pick a complete snapshot; the next `agyctl backup` removes this leftover',
    );
  if (!lookAt(path.join(dir, MANIFEST), dir))
    throw usageError(`${dir} is not a snapshot (no ${MANIFEST}).`, 'give a directory that `agyctl backup` created');
  return dir;
}

/**
 * `latest` never passes over a snapshot this agyctl cannot read because a newer agyctl wrote it (restoring
 * an older one instead): a newer snapshot than `newest` (the newest this agyctl reads) is that error.
 */
function refuseNewerSnapshot(backupDir: string, newest: string | undefined): void {
  for (const snap of listSnapshots(backupDir)) {
    if (newest !== undefined && snap.name.localeCompare(newest) <= 0) return;
    try {
      readManifest(snap.dir);
    } catch (err) {
      if (err instanceof ManifestError && err.problem === 'newer') throw manifestAgyError(err, snap.dir);
    }
  }
}

/** The hint for an archive given where a directory belongs. */
function archiveHint(file: string, takesArchive: boolean): string {
  return takesArchive
    ? `give it with --archive ${file}`
    : `an archive is read by \`agyctl restore --archive ${file}\` (add --dry-run to change nothing), or unpack it with tar -xf and give the directory`;
}

/**
 * A backup dir (--from) that is a file is an archive given in the wrong place: named as one, with --archive
 * suggested (`takesArchive`: the command has --archive), as a SNAPSHOT that is a file is. The code stays the
 * one of a path that is not a directory.
 */
export function refuseArchiveAsBackupDir(backupDir: string, takesArchive: boolean): void {
  if (!isFile(backupDir)) return;
  throw new AgyError(
    EXIT.usage,
    'fs-not-a-directory',
    `${backupDir} is a file (an archive?), not a backup directory.`,
    {
      hint: archiveHint(backupDir, takesArchive),
      details: { path: backupDir, errno: 'ENOTDIR' },
    },
  );
}

/** Whether p is a directory; a path that cannot be looked at (EACCES on the way) is that error, not "no snapshot". */
function isDir(p: string): boolean {
  return lookAt(p, p)?.isDirectory() ?? false;
}

/** p's stat, or null when it is not there; any other failure (EACCES) is that error, about the snapshot `snapshot`. */
function lookAt(p: string, snapshot: string): fs.Stats | null {
  try {
    return fs.statSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw fsAgyError(err, { defaultPath: p, roots: [{ dir: snapshot, role: 'the snapshot' }] }) ?? err;
  }
}

const ARCHIVE_NAME = /\.(tar|tar\.gz|tgz|tar\.zst|tar\.xz)$/i;

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** The snapshots of `source` in a backup dir; one that cannot be read is that error (permission denied names the path). */
function readSnapshots(backupDir: string, source: SnapshotSource): ReturnType<typeof listSnapshots> {
  try {
    return snapshotsOf(backupDir, source);
  } catch (err) {
    throw fsAgyError(err, { defaultPath: backupDir, roots: [{ dir: backupDir, role: 'the backup directory' }] }) ?? err;
  }
}

function snapshotNames(backupDir: string): string[] {
  try {
    return listSnapshots(backupDir).map((s) => path.basename(s.dir));
  } catch {
    return []; // an unreadable backup dir: the error is about the name given
  }
}

/** What to say when no directory answers to `arg`: an archive named as one, else the snapshots there are. */
function noSnapshot(arg: string, candidates: string[], backupDir: string, takesArchive: boolean): Error {
  const isPath = arg.includes('/');
  const file = candidates.find(isFile);
  if (file && (ARCHIVE_NAME.test(file) || !isPath))
    return usageError(`${file} is a file (an archive?), not a snapshot directory.`, archiveHint(file, takesArchive));
  const names = snapshotNames(backupDir);
  const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? ', …' : '');
  return usageError(
    `No snapshot ${arg} (looked at ${candidates.join(' and ')}).`,
    names.length > 0
      ? `the snapshots in ${backupDir} are: ${shown} (or \`latest\`; \`agyctl backup list\` lists them all)`
      : `there is no snapshot in ${backupDir}; give a snapshot directory, or \`--from DIR\` where your backups are (\`agyctl backup list --from DIR\`)`,
  );
}
