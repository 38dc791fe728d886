/**
 * Files a backup run wrote, fsynced together at the end instead of one by one
 * as each is written. Nothing becomes a snapshot before the run fsyncs its
 * work directory and renames it, which happens after `flush()`, so crash
 * safety is the same; but many concurrent fsyncs share the file system's
 * journal commits (ext4, xfs group commit), where one at a time each pays a
 * commit of its own: with 200 small sessions that was most of the run.
 */
import fs from 'node:fs';

const CONCURRENCY = 16;

export class SyncBatch {
  private readonly files: string[] = [];

  add(file: string): void {
    this.files.push(file);
  }

  async flush(): Promise<void> {
    const files = this.files.splice(0);
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < files.length) {
        const file = files[next]!;
        next += 1;
        const handle = await fs.promises.open(file, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, lane));
  }
}
