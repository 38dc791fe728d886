/**
 * `backup --archive FILE|-`: a complete snapshot as one tar stream
 * (manifest.json first, then each session's database, .meta and brain
 * files, the latter named `brain/<id>/<path>`), for
 * `restic backup --stdin` or `rclone rcat`. The manifest comes first so a
 * reader knows every name, size and hash before any file arrives.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { writeStreamAtomic } from '../util/os/atomic-write.js';
import { MANIFEST, readManifest, sessionFiles } from './manifest.js';
import { END, fileHeader, padding } from './tar.js';

const CHUNK = 1 << 20;

/** Waits for 'drain' when the consumer is slower (restic, a network upload): memory stays flat. */
function write(out: Writable, data: Buffer): Promise<void> {
  // The reader went away (EPIPE) between two writes: fail now instead of waiting for a 'drain' that never comes.
  if (out.errored || out.destroyed) return Promise.reject(out.errored ?? new Error('the output was closed'));
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    out.once('error', onError);
    const done = (): void => {
      out.off('error', onError);
      resolve();
    };
    if (out.write(data)) done();
    else out.once('drain', done);
  });
}

async function writeFile(out: Writable, file: string, name: string, mtimeSec: number): Promise<number> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    await write(out, fileHeader(name, size, mtimeSec));
    let left = size;
    while (left > 0) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, left));
      const { bytesRead } = await handle.read(buf, 0, buf.length, size - left);
      if (bytesRead === 0) throw new Error(`${name} shrank while it was archived`);
      await write(out, buf.subarray(0, bytesRead));
      left -= bytesRead;
    }
    await write(out, padding(size));
    return size;
  } finally {
    await handle.close();
  }
}

/** Streams the snapshot in `dir` to `out`; returns the bytes of file content written. */
export async function writeArchive(dir: string, out: Writable, signal?: AbortSignal): Promise<number> {
  const manifest = readManifest(dir);
  const mtime = Date.parse(manifest.created) / 1000;
  // An error between two writes (EPIPE while a file is read) must not be an uncaught 'error' event: the next write reports it.
  const ignore = (): void => {};
  out.on('error', ignore);
  try {
    let bytes = await writeFile(out, path.join(dir, MANIFEST), MANIFEST, mtime);
    for (const s of manifest.sessions) {
      for (const { name } of sessionFiles(s)) {
        signal?.throwIfAborted();
        bytes += await writeFile(out, path.join(dir, ...name.split('/')), name, mtime);
      }
    }
    await write(out, END);
    return bytes;
  } finally {
    out.off('error', ignore);
  }
}

/** To a file: written beside it under a temporary name, fsynced, renamed, so a partial archive never looks whole. */
export async function writeArchiveFile(dir: string, file: string, signal?: AbortSignal): Promise<number> {
  return writeStreamAtomic(file, (out) => writeArchive(dir, out, signal));
}
