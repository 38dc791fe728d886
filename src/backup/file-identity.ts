/** A file's identity between runs: what tells a backup run, without reading it, that a file is the one it saw before. */
import fs from 'node:fs';

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
