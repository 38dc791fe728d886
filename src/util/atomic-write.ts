/**
 * Atomic file replacement: write a temporary file in the same directory,
 * fsync it, rename it over the target, fsync the directory. A crash at any
 * point leaves either the old file or the new one, never a torn mix.
 *
 * Never through a symlink: the temporary file has a random name and is
 * created with O_EXCL|O_NOFOLLOW, its mode and owner are set on the open
 * descriptor, and the rename replaces whatever name is at `file` (a link
 * there is replaced, its target is never touched). Callers that must refuse
 * a link rather than replace it check first (settings, see safe-fs.ts).
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createExclusive, fixDescriptor, lstatOrNull } from './safe-fs.js';

export interface AtomicWriteOptions {
  /** Mode for a new file. An existing regular file keeps its own mode unless `exactMode`. */
  mode?: number;
  /** Always use `mode`, also when replacing an existing file. */
  exactMode?: boolean;
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
  const dir = path.dirname(file);
  let mode = options.mode ?? 0o644;
  const st = lstatOrNull(file);
  if (st?.isFile() && !options.exactMode) mode = st.mode & 0o7777;
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const fd = createExclusive(tmp, mode);
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fixDescriptor(fd, mode); // umask must not narrow or widen what we chose
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fsyncDir(dir);
}
