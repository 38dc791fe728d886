/**
 * Bytes of an open file as chunks, by positional reads: every pass over the
 * archive (the sha256, then the unpack) reads the one descriptor opened and
 * checked first, and never closes it (fs.ReadStream closes a given fd when
 * it is destroyed).
 */
import { once } from 'node:events';
import fs from 'node:fs';
import { promisify } from 'node:util';
import type zlib from 'node:zlib';

const read = promisify(fs.read);
const CHUNK = 1024 * 1024;

/** Bytes [start, end) of `fd`; stops early at the end of the file. */
export async function* readRange(fd: number, start: number, end = Number.POSITIVE_INFINITY): AsyncGenerator<Buffer> {
  for (let position = start; position < end; ) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, end - position));
    const { bytesRead } = await read(fd, buf, 0, buf.length, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}

/**
 * `source` through a zlib transform, with back-pressure; a zlib error
 * (corrupt data) becomes `damaged()`. The transform ends when the source
 * does, so a stream cut short fails as "unexpected end of file".
 */
export async function* inflated(
  source: AsyncIterable<Buffer>,
  transform: zlib.Inflate | zlib.InflateRaw | zlib.Gunzip,
  damaged: () => Error,
): AsyncGenerator<Buffer> {
  const feeding = (async () => {
    for await (const chunk of source) {
      if (!transform.write(chunk)) await once(transform, 'drain');
    }
    transform.end();
  })();
  feeding.catch((err: unknown) => transform.destroy(err as Error));
  try {
    for await (const chunk of transform) yield chunk as Buffer;
    await feeding;
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('Z_')) throw damaged();
    throw err;
  } finally {
    transform.destroy();
  }
}
