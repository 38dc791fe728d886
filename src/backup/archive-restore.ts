/** An archive (a file or stdin) unpacked and verified into a scratch snapshot directory, for restore and its dry run. */
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { readArchive } from './archive-read.js';
import { withScratchDir } from './scratch-dir.js';

/** `source`: a file, or `-` for `stdin`. */
export async function withArchiveSnapshot<T>(
  source: string,
  { stdin, tmpRoot, signal }: { stdin: Readable; tmpRoot: string; signal: AbortSignal },
  fn: (snapshotDir: string) => Promise<T>,
): Promise<T> {
  return withScratchDir(tmpRoot, 'agyctl-archive-', async (dir) => {
    const input = source === '-' ? stdin : fs.createReadStream(source);
    try {
      await readArchive(input, dir, signal);
    } finally {
      if (source !== '-') input.destroy();
    }
    return fn(dir);
  });
}
