/**
 * File access in directories someone else may control. agyctl runs as root
 * on a user's state dir (provisioning) and may write backups into a
 * directory a user can write to; that user can plant symlinks, FIFOs and
 * files with names agyctl will use. So, in such directories, agyctl never
 * writes, creates, copies or reads-for-copying through a symlink: opens use
 * O_NOFOLLOW (and O_NONBLOCK for reads, so a planted FIFO cannot hang us),
 * new files are created with O_EXCL or inside a fresh private directory, and
 * modes are set on the open descriptor (fchmod), never by a path a user
 * could swap. As root in another user's tree agyctl runs as that user
 * (cli/as-owner.ts): these guards then protect the user from their own
 * directory's other writers, never root from the user.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT } from '../../core/errors.js';
import { pidAlive } from './process.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

export function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return null;
    throw err;
  }
}

function linkTarget(file: string): string {
  try {
    return fs.readlinkSync(file);
  } catch {
    return '(unreadable)';
  }
}

/** Exit 2, code `unsafe-symlink`: names the link, where it points, and the fix. */
export function unsafeSymlinkError(file: string, what = 'this file'): AgyError {
  const target = linkTarget(file);
  const resolved = path.resolve(path.dirname(file), target);
  const leaves = path.dirname(resolved) !== path.dirname(file);
  return new AgyError(
    EXIT.usage,
    'unsafe-symlink',
    `${file} (${what}) is a symbolic link to ${target}${leaves ? ', outside its directory' : ''}; agyctl does not follow a link there (it would read, write or copy another file). Nothing was changed.`,
    {
      hint: `replace the link with the real file (check where it points first), or remove it: rm ${file}`,
      details: { path: file, target },
    },
  );
}

/** The files agyctl writes for its caller where another user may have made the name first (in /tmp, a textfile dir). */
export type CallersFileFlag = '--trace' | '--prometheus';

/**
 * Exit 2, `trace-file-not-yours` or `prometheus-file-not-yours`: a file of
 * another user at the caller's --trace or --prometheus path would get the
 * caller's bytes and stay theirs (or lend its mode to the caller's file).
 */
export function notYoursError(file: string, uid: number, flag: CallersFileFlag): AgyError {
  return new AgyError(
    EXIT.usage,
    flag === '--trace' ? 'trace-file-not-yours' : 'prometheus-file-not-yours',
    `The ${flag} file ${file} belongs to uid ${uid}, not to you: agyctl writes only to a ${flag} file of its own.`,
    { hint: `name a new file (or one of yours) for ${flag}, or remove that one`, details: { path: file, uid } },
  );
}

/**
 * Nothing at `file`, or the caller's own file, reached without a link:
 * `unsafe-symlink` for a link, notYoursError for another user's file.
 */
export function assertCallersFile(file: string, flag: CallersFileFlag): void {
  const st = lstatOrNull(file);
  if (st?.isSymbolicLink()) throw unsafeSymlinkError(file, `the ${flag} file`);
  if (st?.isFile() && st.uid !== process.getuid?.()) throw notYoursError(file, st.uid, flag);
}

/** Throws `unsafe-symlink` when `file` is a symlink; a missing file is fine. */
export function assertNotSymlink(file: string, what?: string): void {
  if (lstatOrNull(file)?.isSymbolicLink()) throw unsafeSymlinkError(file, what);
}

/** open(2) with O_NOFOLLOW: a symlink at `file` becomes `unsafe-symlink` instead of being followed. */
export function openNoFollow(file: string, flags: number, mode = 0o600, what?: string): number {
  try {
    return fs.openSync(file, flags | O_NOFOLLOW, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP' && lstatOrNull(file)?.isSymbolicLink())
      throw unsafeSymlinkError(file, what);
    throw err;
  }
}

/** A file's bytes, read only if it is a regular file reached without following a link. */
export function readFileNoFollow(file: string, what?: string): Buffer {
  const fd = openNoFollow(file, O_RDONLY | O_NONBLOCK, 0, what);
  try {
    if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' });
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A new file at exactly `file`: fails (EEXIST) if anything, a symlink included, is already there. */
export function createExclusive(file: string, mode = 0o600): number {
  return fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
}

/** The mode on an open descriptor (umask must not decide; a path could be swapped). */
export function fixDescriptor(fd: number, mode: number): void {
  fs.fchmodSync(fd, mode);
}

/**
 * Set the mode of a file agyctl just made (e.g. SQLite's VACUUM INTO
 * output), refusing anything but a regular file, and fsync it; `fsync: false`
 * when the caller fsyncs it later (backup's SyncBatch).
 */
export function finishFile(file: string, mode: number, opts: { fsync?: boolean } = {}): void {
  const fd = openNoFollow(file, O_RDONLY | O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' });
    fixDescriptor(fd, mode);
    if (opts.fsync !== false) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Copy a regular file without following a link at either end: `to` must
 * not exist (O_EXCL), gets `mode`, and is fsynced.
 */
export function copyFileNoFollow(from: string, to: string, mode = 0o600): void {
  const src = openNoFollow(from, O_RDONLY | O_NONBLOCK);
  try {
    if (!fs.fstatSync(src).isFile())
      throw Object.assign(new Error(`${from} is not a regular file`), { code: 'EINVAL' });
    const dst = createExclusive(to, mode);
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let n = fs.readSync(src, buf, 0, buf.length, null); n > 0; n = fs.readSync(src, buf, 0, buf.length, null)) {
        for (let off = 0; off < n; ) off += fs.writeSync(dst, buf, off, n - off);
      }
      fixDescriptor(dst, mode);
      fs.fsyncSync(dst);
    } catch (err) {
      fs.closeSync(dst);
      fs.rmSync(to, { force: true });
      throw err;
    }
    fs.closeSync(dst);
  } finally {
    fs.closeSync(src);
  }
}

/**
 * A fresh directory `parent/.agyctl-<random>` (mode 0700, ours): nobody else
 * can plant anything inside it, so tools that create their output by path
 * (SQLite's VACUUM INTO) can safely write there. Remove it with `rmPrivateDir`.
 */
export function makePrivateDir(parent: string, label: string): string {
  return fs.mkdtempSync(path.join(parent, `.agyctl-${label}-${process.pid}-`));
}

/** Private dirs that a killed run left in `parent` (ours, their pid gone): removed. Returns their names. */
export function sweepPrivateDirs(parent: string, label: string): string[] {
  const re = new RegExp(`^\\.agyctl-${label}-(\\d+)-[A-Za-z0-9]{6}$`);
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(re.exec(name)?.[1] ?? NaN);
    if (!Number.isInteger(pid) || pid === process.pid || pidAlive(pid)) continue;
    const st = lstatOrNull(path.join(parent, name));
    if (!st?.isDirectory() || st.uid !== process.getuid?.()) continue;
    rmPrivateDir(path.join(parent, name));
    removed.push(name);
  }
  return removed;
}

export function rmPrivateDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * mkdir -p with mode 0700; returns whether anything was created. As root in
 * a user's tree agyctl runs as that user (cli/as-owner.ts), so what it
 * creates is the user's without a chown.
 */
export function mkdirPrivate(dir: string): boolean {
  return fs.mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined;
}

/**
 * mkdir -p whose failure says why: Node's recursive mkdir says ENOENT on a
 * read-only file system, where a plain mkdir of the first missing directory
 * says EROFS (or EACCES), naming that directory.
 */
export function mkdirsSayingWhy(dir: string, mode = 0o700): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(firstMissing(path.resolve(dir)), { mode });
    fs.mkdirSync(dir, { recursive: true, mode });
  }
}

function firstMissing(dir: string): string {
  let missing = dir;
  while (path.dirname(missing) !== missing && lstatOrNull(path.dirname(missing)) === null)
    missing = path.dirname(missing);
  return missing;
}

/**
 * Whether this process holds a descriptor on the file `expected` (an lstat
 * taken before opening) describes. SQLite opens by path and cannot be told
 * O_NOFOLLOW: checked right after an open, this tells that it opened that
 * file, not a link swapped in for the moment of the open. Linux /proc;
 * elsewhere (no /proc) it cannot tell and says yes.
 */
export function holdsOpen(expected: fs.Stats): boolean {
  let fds: string[];
  try {
    fds = fs.readdirSync('/proc/self/fd');
  } catch {
    return true;
  }
  for (const fd of fds) {
    try {
      const st = fs.statSync(`/proc/self/fd/${fd}`);
      if (st.dev === expected.dev && st.ino === expected.ino) return true;
    } catch {
      /* closed meanwhile */
    }
  }
  return false;
}

/** SQLite did not open the file agyctl checked (a link was swapped in around the open): nothing is read from it. */
export class SwappedError extends Error {
  constructor(file: string) {
    super(`${file} was replaced while agyctl opened it (a symlink swapped in?); nothing was read from it`);
  }
}

/**
 * A directory agyctl made for itself (a backup run's work dir) is still a
 * real directory of ours, not writable by others: in a destination another
 * user can write to, that user could rename it away and put a link or a
 * directory of their own in its place between two of our writes.
 */
export function assertPrivateDir(dir: string): void {
  const st = lstatOrNull(dir);
  if (st?.isSymbolicLink()) throw unsafeSymlinkError(dir, 'a directory agyctl created');
  if (!st?.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) {
    throw Object.assign(
      new Error(`${dir} is no longer the private directory agyctl created (replaced by someone else?)`),
      { code: 'EPERM' },
    );
  }
}

/** A new file (O_EXCL|O_NOFOLLOW: never an existing name or a link), `mode` whatever the umask, fsynced unless `fsync: false` (the caller fsyncs it later). */
export function writeNewFile(file: string, data: Uint8Array, mode = 0o600, opts: { fsync?: boolean } = {}): void {
  const fd = createExclusive(file, mode);
  try {
    fs.writeSync(fd, data);
    fixDescriptor(fd, mode);
    if (opts.fsync !== false) fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw err;
  }
  fs.closeSync(fd);
}
