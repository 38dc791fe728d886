/**
 * Files a backup run wrote, fsynced in the background while the run goes on
 * (a few at a time, in libuv's thread pool) instead of one by one on the
 * main thread: there a blocking fsync held up the next session's dispatch
 * to the workers, and every fsync paid a journal commit of its own.
 * Concurrent fsyncs share the file system's journal commits (ext4, xfs
 * group commit). Nothing becomes a snapshot before `flush()` has waited for
 * all of them and the run fsyncs its work directory and renames it, so crash
 * safety is the same as fsyncing each file at once.
 */
import fs from 'node:fs';

const CONCURRENCY = 4;

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
    while (this.running.size < CONCURRENCY && this.waiting.length > 0) {
      const file = this.waiting.shift()!;
      const done: Promise<void> = fsyncFile(file)
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

async function fsyncFile(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
