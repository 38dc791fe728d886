/** File-level helpers for snapshots: hashing, fsync, (inode, size, mtime) identity, hard links. */
import crypto from 'node:crypto';
import fs from 'node:fs';

const CHUNK = 1 << 20;

/** sha256 of a file, read in 1 MB chunks so memory stays flat whatever the size. */
export function sha256File(file: string): string {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let n = fs.readSync(fd, buf, 0, CHUNK, null); n > 0; n = fs.readSync(fd, buf, 0, CHUNK, null)) hash.update(buf.subarray(0, n));
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
  return { inode: st.ino.toString(), size: Number(st.size), mtimeNs: st.mtimeNs.toString(), mtime: new Date(Number(st.mtimeNs / 1_000_000n)).toISOString() };
}

export function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  if (a === null || b === null) return a === b;
  return a.inode === b.inode && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/** Hard-link where the filesystem allows it (same content, no space), else copy and fsync. */
export function linkOrCopy(from: string, to: string): 'linked' | 'copied' {
  try {
    fs.linkSync(from, to);
    return 'linked';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
  }
  fs.copyFileSync(from, to);
  fsyncFile(to);
  return 'copied';
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
