/**
 * File-level helpers for snapshots: hashing, fsync, (inode, size, mtime)
 * identity, hard links, and the batch of fsyncs a run waits for.
 *
 * SyncBatch: files a backup run wrote, fsynced in the background while the
 * run goes on (a few at a time, in libuv's thread pool) instead of one by
 * one on the main thread: there a blocking fsync held up the next session's
 * dispatch to the workers, and every fsync paid a journal commit of its
 * own. Concurrent fsyncs share the file system's journal commits (ext4, xfs
 * group commit). Nothing becomes a snapshot before `flush()` has waited for
 * all of them and the run fsyncs its work directory and renames it, so
 * crash safety is the same as fsyncing each file at once.
 */
import fs from 'node:fs';
import { sha256File } from '../util/os/file-hash.js';
import { copyFileNoFollow, openNoFollow } from '../util/os/safe-fs.js';

/**
 * SQLite header fields that differ between two VACUUM INTO copies of the same content: the change counter,
 * the schema cookie (bumped by a journal-mode switch), version-valid-for and the writing library's version.
 */
const VOLATILE_SQLITE_HEADER: ReadonlyArray<readonly [number, number]> = [
  [24, 28],
  [40, 44],
  [92, 100],
];

/** Two compacted (VACUUM INTO) database files hold the same content: same size, same bytes past the volatile header fields. */
export function sameDatabaseContent(a: string, b: string): boolean {
  if (fs.statSync(a).size !== fs.statSync(b).size) return false;
  return sha256File(a, { zeroed: VOLATILE_SQLITE_HEADER }) === sha256File(b, { zeroed: VOLATILE_SQLITE_HEADER });
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

const SYNC_CONCURRENCY = 4;

export class SyncBatch {
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();
  private failure: unknown;

  /** Start fsyncing `file` (now, or when one of the running fsyncs ends). */
  add(file: string): void {
    this.waiting.push(file);
    this.pump();
  }

  /** Every added file fsynced; the first failure (ENOSPC, EIO ...) is thrown. */
  async flush(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
    if (this.failure !== undefined) throw this.failure;
  }

  private pump(): void {
    while (this.running.size < SYNC_CONCURRENCY && this.waiting.length > 0) {
      const file = this.waiting.shift()!;
      const done: Promise<void> = fsyncFileAsync(file)
        .catch((err: unknown) => {
          this.failure ??= err;
        })
        .finally(() => {
          this.running.delete(done);
          this.pump();
        });
      this.running.add(done);
    }
  }
}

async function fsyncFileAsync(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
