/**
 * Unpacking a `.tar.gz` server archive as a stream: ustar headers (parsed
 * by src/backup/tar.ts), GNU long names and pax `path`/`linkpath` records;
 * regular files, directories, symlinks and hard links. Everything else is
 * refused by the target (devices, FIFOs). The unpacked size is not known up
 * front, so the target stops the moment it outruns the free space.
 */
import zlib from 'node:zlib';
import { BLOCK, parseHeader } from '../backup/tar.js';
import { inflated, readRange } from './read-range.js';
import { type ArchiveEntry, type EntryKind, refused, type UnpackTarget } from './unpack-target.js';

const damaged = (what: string) => refused(`The tar.gz archive is damaged or truncated (${what}).`);
const MAX_META_BYTES = 1024 * 1024;

/** Pulls exact byte counts out of a stream of chunks. */
class ByteQueue {
  private readonly it: AsyncIterator<Buffer>;
  private buf: Buffer = Buffer.alloc(0);
  constructor(source: AsyncIterable<Buffer>) {
    this.it = source[Symbol.asyncIterator]();
  }
  private async more(): Promise<boolean> {
    const next = await this.it.next();
    if (next.done) return false;
    this.buf = this.buf.length === 0 ? next.value : Buffer.concat([this.buf, next.value]);
    return true;
  }
  /** Exactly n bytes, or fewer at the end of the stream. */
  async take(n: number): Promise<Buffer> {
    while (this.buf.length < n) if (!(await this.more())) break;
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(out.length);
    return out;
  }
  /** n bytes as chunks as they arrive. */
  async *stream(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.buf.length === 0 && !(await this.more())) throw damaged('an entry is cut short');
      const out = this.buf.subarray(0, Math.min(left, this.buf.length));
      this.buf = this.buf.subarray(out.length);
      left -= out.length;
      yield out;
    }
  }
}

const pad = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK;

function kindOf(type: string): EntryKind {
  if (type === '0' || type === '7') return 'file';
  if (type === '5') return 'dir';
  if (type === '2') return 'symlink';
  if (type === '1') return 'hardlink';
  return 'other';
}

function paxRecords(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^\d+ ([^=\n]+)=(.*)$/gm)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

async function takeExact(q: ByteQueue, n: number): Promise<Buffer> {
  const b = await q.take(n);
  if (b.length < n) throw damaged('the archive ends inside an entry');
  return b;
}

export async function unpackTarGz(fd: number, target: UnpackTarget): Promise<void> {
  const source = inflated(readRange(fd, 0), zlib.createGunzip({ chunkSize: 1024 * 1024 }), () =>
    damaged('it does not gunzip'),
  );
  await readEntries(new ByteQueue(source), target);
  target.finish();
}

async function readEntries(q: ByteQueue, target: UnpackTarget): Promise<void> {
  let longName: string | undefined;
  let longLink: string | undefined;
  for (;;) {
    const block = await q.take(BLOCK);
    if (block.length === 0) throw damaged('no end-of-archive marker');
    if (block.length < BLOCK) throw damaged('a short header');
    let header: ReturnType<typeof parseHeader>;
    try {
      header = parseHeader(block);
    } catch (err) {
      throw damaged((err as Error).message);
    }
    if (!header) return;
    const linkField = block.subarray(157, 257);
    const nul = linkField.indexOf(0);
    const linkname = linkField.subarray(0, nul < 0 ? 100 : nul).toString('utf8');
    if (header.type === 'L' || header.type === 'K' || header.type === 'x' || header.type === 'g') {
      if (header.size > MAX_META_BYTES) throw damaged('an oversized metadata record');
      const text = (await takeExact(q, header.size)).toString('utf8');
      await takeExact(q, pad(header.size));
      if (header.type === 'L') longName = text.replace(/\0+$/, '');
      else if (header.type === 'K') longLink = text.replace(/\0+$/, '');
      else if (header.type === 'x') {
        const pax = paxRecords(text);
        if (pax.path !== undefined) longName = pax.path;
        if (pax.linkpath !== undefined) longLink = pax.linkpath;
      }
      continue;
    }
    const entry: ArchiveEntry = {
      name: longName ?? header.name,
      kind: kindOf(header.type),
      mode: header.mode,
      link: longLink ?? linkname,
    };
    longName = undefined;
    longLink = undefined;
    if (entry.kind === 'file') await target.file(entry, header.size, q.stream(header.size));
    else {
      if (entry.kind === 'dir') target.directory(entry);
      else if (entry.kind === 'other')
        target.directory(entry); // refused by the target
      else target.link(entry);
      for await (const _ of q.stream(header.size)) {
        /* a non-file entry's data, if any, is skipped */
      }
    }
    await takeExact(q, pad(header.size));
  }
}
