/**
 * A snapshot's files as a run writes them: private (0600), hard-linked from
 * the previous snapshot where unchanged, and fsynced in the background.
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
import { copyFileNoFollow, openNoFollow } from '../util/os/safe-fs.js';

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
