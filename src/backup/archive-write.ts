/**
 * `backup --archive FILE|-`: a complete snapshot as one tar stream
 * (manifest.json first, then each session's database, .meta and brain
 * files, the latter named `brain/<id>/<path>`), for
 * `restic backup --stdin` or `rclone rcat`. The manifest comes first so a
 * reader knows every name, size and hash before any file arrives.
 */
import crypto from 'node:crypto';
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

/** How a file of the snapshot is opened (root on another user's behalf: only root's own, no links: util/os/roots-own.ts). */
type Opener = (dir: string, name: string) => Promise<fs.promises.FileHandle>;

const openPlain: Opener = (dir, name) => fs.promises.open(path.join(dir, ...name.split('/')), 'r');

async function writeFile(
  out: Writable,
  handle: fs.promises.FileHandle,
  name: string,
  mtimeSec: number,
): Promise<number> {
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

/** The sha256 and size of what `handle` holds (read from the start). */
async function hashOf(handle: fs.promises.FileHandle): Promise<{ sha256: string; bytes: number }> {
  const hash = crypto.createHash('sha256');
  const buf = Buffer.allocUnsafe(CHUNK);
  let bytes = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, buf.length, bytes);
    if (bytesRead === 0) return { sha256: hash.digest('hex'), bytes };
    hash.update(buf.subarray(0, bytesRead));
    bytes += bytesRead;
  }
}

/**
 * Streams the snapshot in `dir` to `out`; returns the bytes of file content
 * written. `withoutReusedDb`: the database of a session marked reused is left
 * out (the owner's side of root's backup: root has that file already).
 */
export async function writeArchive(
  dir: string,
  out: Writable,
  signal?: AbortSignal,
  open: Opener = openPlain,
  { withoutReusedDb = false }: { withoutReusedDb?: boolean } = {},
): Promise<number> {
  const manifest = readManifest(dir);
  const mtime = Date.parse(manifest.created) / 1000;
  // An error between two writes (EPIPE while a file is read) must not be an uncaught 'error' event: the next write reports it.
  const ignore = (): void => {};
  out.on('error', ignore);
  try {
    let bytes = await writeFile(out, await open(dir, MANIFEST), MANIFEST, mtime);
    for (const s of manifest.sessions) {
      for (const { name } of sessionFiles(s)) {
        signal?.throwIfAborted();
        if (withoutReusedDb && s.reused && name === s.file) continue;
        bytes += await writeFile(out, await open(dir, name), name, mtime);
      }
    }
    await write(out, END);
    return bytes;
  } finally {
    out.off('error', ignore);
  }
}

/** A file of the snapshot does not match its manifest (named, never with the hash of what was read). */
export class SnapshotMismatch extends Error {}

/**
 * Root streaming its own snapshot into another user's restore: every file is
 * opened as root's own (no links, root-owned, regular: `open`) and hashed
 * against the manifest before the stream starts, so the user's side never
 * holds a byte the manifest does not vouch for. Throws the opener's error, or
 * SnapshotMismatch.
 */
export async function verifySnapshotFiles(dir: string, open: Opener, signal?: AbortSignal): Promise<void> {
  await (await open(dir, MANIFEST)).close();
  const manifest = readManifest(dir);
  for (const s of manifest.sessions) {
    for (const f of sessionFiles(s)) {
      signal?.throwIfAborted();
      const handle = await open(dir, f.name);
      try {
        const got = await hashOf(handle);
        if (got.sha256 !== f.sha256 || got.bytes !== f.bytes)
          throw new SnapshotMismatch(`${f.name} does not match the snapshot's manifest`);
      } finally {
        await handle.close();
      }
    }
  }
}

/** To a file: written beside it under a temporary name, fsynced, renamed, so a partial archive never looks whole. */
export async function writeArchiveFile(dir: string, file: string, signal?: AbortSignal): Promise<number> {
  return writeStreamAtomic(file, (out) => writeArchive(dir, out, signal));
}
