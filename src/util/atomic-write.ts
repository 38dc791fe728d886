/**
 * Atomic file replacement: write a temporary file in the same directory,
 * fsync it, rename it over the target, fsync the directory. A crash at any
 * point leaves either the old file or the new one, never a torn mix.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

export interface AtomicWriteOptions {
  /** Mode for a new file. An existing target keeps its own mode. */
  mode?: number;
  /** Write through a symlink to its target instead of replacing the link. */
  followSymlink?: boolean;
}

export function realTarget(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file; // does not exist yet (or dangling): write the path as given
  }
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const target = options.followSymlink === false ? file : realTarget(file);
  const dir = path.dirname(target);
  let mode = options.mode ?? 0o644;
  try {
    mode = fs.statSync(target).mode & 0o7777;
  } catch {
    /* new file: use the requested mode */
  }
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fs.fchmodSync(fd, mode); // umask must not narrow or widen what we chose
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fsyncDir(dir);
}
