/** File-level helpers for snapshots: hashing, fsync, (inode, size, mtime) identity, hard links. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { copyFileNoFollow, openNoFollow } from '../util/safe-fs.js';

const CHUNK = 1 << 20;

/** sha256 of a file, read in 1 MB chunks so memory stays flat whatever the size. A symlink is never followed (unsafe-symlink). */
export function sha256File(file: string): string {
  const hash = crypto.createHash('sha256');
  const fd = openNoFollow(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let n = fs.readSync(fd, buf, 0, CHUNK, null); n > 0; n = fs.readSync(fd, buf, 0, CHUNK, null))
      hash.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * What identifies a file's content between runs without reading it. ctime is
 * left out on purpose: a read-only reader running as root touches it.
 * Inode and mtime are kept as decimal strings (64-bit values, exact).
 */
export interface FileIdentity {
  inode: string;
  size: number;
  mtimeNs: string;
  mtime: string;
}

export function identityOf(file: string): FileIdentity | null {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(file, { bigint: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return {
    inode: st.ino.toString(),
    size: Number(st.size),
    mtimeNs: st.mtimeNs.toString(),
    mtime: new Date(Number(st.mtimeNs / 1_000_000n)).toISOString(),
  };
}

export function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  if (a === null || b === null) return a === b;
  return a.inode === b.inode && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/**
 * Hard-link where the filesystem allows it (same content, no space), else
 * copy and fsync. Only a regular file is reused (a backup directory may be
 * writable by others: a planted link is never linked or followed), and it
 * ends up 0600 like every snapshot file.
 */
export function linkOrCopy(from: string, to: string): 'linked' | 'copied' {
  if (!fs.lstatSync(from).isFile()) throw Object.assign(new Error(`${from} is not a regular file`), { code: 'EINVAL' });
  try {
    fs.linkSync(from, to);
    narrowMode(to);
    return 'linked';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP')
      throw err;
  }
  copyFileNoFollow(from, to, SNAPSHOT_FILE_MODE);
  return 'copied';
}

/** Snapshot files hold conversations: 0600 (directories 0700). */
export const SNAPSHOT_FILE_MODE = 0o600;

/** Older snapshots made their .db files 0644: narrow a linked one of ours (it is the same inode) without following links. */
function narrowMode(file: string): void {
  const fd = openNoFollow(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (st.isFile() && st.uid === process.getuid?.() && (st.mode & 0o077) !== 0) fs.fchmodSync(fd, SNAPSHOT_FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
}

/** Errors that mean "the destination cannot take more data": the whole run stops, nothing half-written remains. */
const NO_SPACE: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large (file-size limit)',
  SQLITE_FULL: 'the disk is full',
  // SQLite reports EFBIG and other failed writes this way; the snapshot is its only write target.
  SQLITE_IOERR_WRITE: 'a write failed: the disk is full, a quota or file-size limit was hit, or the device failed',
  SQLITE_IOERR_FSYNC: 'fsync failed',
  SQLITE_IOERR_TRUNCATE: 'a write failed',
};

export function isNoSpace(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code in NO_SPACE;
}

export function noSpaceText(err: unknown): string {
  const code = String((err as { code?: unknown } | null)?.code);
  return `${NO_SPACE[code] ?? errorText(err)} (${code})`;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
