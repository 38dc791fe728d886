/** An archive (a file or stdin) unpacked and verified into a scratch snapshot directory, for restore and its dry run. */
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { type AgyError, usageError } from '../core/errors.js';
import type { RunContext } from '../core/io.js';
import { tempRoot } from '../core/paths.js';
import { readArchive } from './archive-read.js';
import { withScratchDir } from './scratch-dir.js';

/** `source`: a file, or `-` for the run's stdin; unpacked under the run's temporary dir. */
export async function withArchiveSnapshot<T>(
  source: string,
  ctx: RunContext,
  fn: (snapshotDir: string) => Promise<T>,
): Promise<T> {
  return withScratchDir(tempRoot(ctx.env), 'agyctl-archive-', async (dir) => {
    const input = source === '-' ? ctx.stdin : openArchive(source);
    try {
      await readArchive(input, dir, ctx.signal);
    } finally {
      if (source !== '-') input.destroy();
    }
    return fn(dir);
  });
}

/**
 * Root opens an archive file only as a regular file reached without a link
 * at its name (O_NONBLOCK: a FIFO planted there cannot hang it); others may
 * give a FIFO or /dev/fd/N (`--archive <(restic dump …)`).
 */
function openArchive(file: string): Readable {
  if (process.geteuid?.() !== 0) return fs.createReadStream(file);
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  let fd: number;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw notAFile(file, 'a symbolic link');
    throw err;
  }
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw notAFile(file, 'not a regular file (a FIFO or a device?)');
  }
  return fs.createReadStream('', { fd });
}

function notAFile(file: string, what: string): AgyError {
  return usageError(
    `--archive ${file} is ${what}; as root agyctl reads only a regular file there. Nothing was restored.`,
    'give the archive file itself, or pipe it in: agyctl restore --archive - < FILE',
  );
}
