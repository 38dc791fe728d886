/**
 * SHA-256 of bytes and of files, the one way agyctl hashes what it stores or
 * compares. A file is hashed through a descriptor opened O_NOFOLLOW and
 * O_NONBLOCK (a planted link is `unsafe-symlink`, a planted FIFO cannot
 * hang us) and must be a regular file; it is read in 1 MB chunks, so memory
 * stays flat whatever its size.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { openNoFollow } from './safe-fs.js';

const CHUNK = 1 << 20;

export const sha256 = (data: string | Uint8Array): string => crypto.createHash('sha256').update(data).digest('hex');

/** A regular file's descriptor, reached without a link; EINVAL for anything else. */
function openRegular(file: string): number {
  const fd = openNoFollow(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' });
  }
  return fd;
}

/** sha256 of a file; `zeroed`: byte ranges of its first chunk that count as zero (fields that differ between equal copies). */
export function sha256File(file: string, opts: { zeroed?: ReadonlyArray<readonly [number, number]> } = {}): string {
  const hash = crypto.createHash('sha256');
  const fd = openRegular(file);
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let at = 0;
    for (let n = fs.readSync(fd, buf, 0, CHUNK, null); n > 0; n = fs.readSync(fd, buf, 0, CHUNK, null)) {
      if (at === 0) for (const [from, to] of opts.zeroed ?? []) buf.fill(0, from, Math.min(to, n));
      hash.update(buf.subarray(0, n));
      at += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/** Two read buffers per thread for all its hashes: no 1 MB garbage per file for the GC to catch up with (peak RSS). */
let bufs: readonly [Buffer, Buffer] | undefined;
let bufsInUse = false;
const twoBuffers = (): readonly [Buffer, Buffer] => [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];

/**
 * sha256 of a file, the next chunk read (in libuv's pool) while this thread
 * hashes the last one: for large files hashed off the main thread (backup's
 * workers). A thread hashes one file at a time there; on the calling thread
 * two may overlap, and the second gets buffers of its own.
 */
export async function sha256FileAsync(file: string): Promise<string> {
  const own = bufsInUse;
  if (!own) bufs ??= twoBuffers();
  const b = own ? twoBuffers() : bufs!;
  if (!own) bufsInUse = true;
  const hash = crypto.createHash('sha256');
  let fd: number;
  try {
    fd = openRegular(file);
  } catch (err) {
    if (!own) bufsInUse = false;
    throw err;
  }
  const read = (i: 0 | 1, pos: number): Promise<number> =>
    new Promise((resolve, reject) => {
      fs.read(fd, b[i], 0, b[i].length, pos, (err, n) => (err ? reject(err) : resolve(n)));
    });
  let i: 0 | 1 = 0;
  let pending = read(0, 0);
  try {
    for (let pos = 0, n = await pending; n > 0; n = await pending) {
      pos += n;
      const full = b[i];
      i = i === 0 ? 1 : 0;
      pending = read(i, pos);
      hash.update(full.subarray(0, n));
    }
  } finally {
    await pending.catch(() => {}); // never close the descriptor under a read still running
    fs.closeSync(fd);
    if (!own) bufsInUse = false;
  }
  return hash.digest('hex');
}
