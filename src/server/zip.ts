/**
 * The little of ZIP that a published server archive needs, read from its
 * central directory: stored and deflated entries, Unix modes, zip64 sizes
 * and offsets. Hand-written (no zip library among the dependencies; Node's
 * zlib inflates): the central directory gives every entry's name, type and
 * unpacked size before a byte is written, so a hostile or oversized archive
 * is refused whole. No CRC check: the whole archive's sha256 was verified
 * before this reads it, and each entry must inflate to exactly its size.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { showUntrusted } from '../core/safe-path.js';
import { inflated, readRange } from './read-range.js';
import { type ArchiveEntry, type EntryKind, refused, type UnpackTarget } from './unpack-target.js';

const EOCD_SIG = 0x06054b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
const ZIP64_EOCD_SIG = 0x06064b50;
const CENTRAL_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
const MAX_COMMENT = 0xffff;

export interface ZipEntry extends ArchiveEntry {
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

const damaged = (what: string) => refused(`The zip archive is damaged or truncated (${what}).`);

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

function u64(buf: Buffer, at: number): number {
  const v = buf.readBigUInt64LE(at);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw damaged('a size out of range');
  return Number(v);
}

interface Directory {
  offset: number;
  size: number;
  count: number;
}

function findDirectory(fd: number, fileSize: number): Directory {
  const tailLength = Math.min(fileSize, 22 + MAX_COMMENT);
  const tailStart = fileSize - tailLength;
  const tail = readAt(fd, tailStart, tailLength);
  let at = -1;
  for (let i = tail.length - 22; i >= 0; i -= 1) {
    if (tail.readUInt32LE(i) === EOCD_SIG && i + 22 + tail.readUInt16LE(i + 20) === tail.length) {
      at = i;
      break;
    }
  }
  if (at < 0) throw damaged('no end of central directory');
  let dir: Directory = {
    count: tail.readUInt16LE(at + 10),
    size: tail.readUInt32LE(at + 12),
    offset: tail.readUInt32LE(at + 16),
  };
  const locatorAt = tailStart + at - 20;
  if (locatorAt >= 0) {
    const locator = readAt(fd, locatorAt, 20);
    if (locator.length === 20 && locator.readUInt32LE(0) === ZIP64_LOCATOR_SIG) {
      const record = readAt(fd, u64(locator, 8), 56);
      if (record.length < 56 || record.readUInt32LE(0) !== ZIP64_EOCD_SIG) throw damaged('a bad zip64 record');
      dir = { count: u64(record, 32), size: u64(record, 40), offset: u64(record, 48) };
    }
  }
  if (dir.offset + dir.size > fileSize) throw damaged('the central directory is past the end');
  return dir;
}

function kindOf(madeBy: number, external: number, name: string): { kind: EntryKind; mode: number } {
  const unixMode = madeBy >> 8 === 3 ? external >>> 16 : 0;
  const type = unixMode & 0o170000;
  const isDirName = name.endsWith('/');
  if (unixMode === 0 || type === 0) return { kind: isDirName ? 'dir' : 'file', mode: isDirName ? 0o755 : 0o644 };
  const mode = unixMode & 0o7777;
  if (type === 0o100000) return { kind: isDirName ? 'dir' : 'file', mode };
  if (type === 0o040000) return { kind: 'dir', mode };
  if (type === 0o120000) return { kind: 'symlink', mode };
  return { kind: 'other', mode };
}

function zip64Extra(extra: Buffer, need: { size: boolean; compressed: boolean; offset: boolean }): number[] {
  for (let i = 0; i + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(i);
    const len = extra.readUInt16LE(i + 2);
    if (id === 0x0001) {
      const values: number[] = [];
      let at = i + 4;
      for (const wanted of [need.size, need.compressed, need.offset]) {
        if (!wanted) continue;
        if (at + 8 > i + 4 + len) throw damaged('a short zip64 field');
        values.push(u64(extra, at));
        at += 8;
      }
      return values;
    }
    i += 4 + len;
  }
  throw damaged('a missing zip64 field');
}

/** Every entry the central directory lists, in order. */
export function readZipDirectory(fd: number, fileSize: number): ZipEntry[] {
  const dir = findDirectory(fd, fileSize);
  const buf = readAt(fd, dir.offset, dir.size);
  if (buf.length < dir.size) throw damaged('the central directory is cut short');
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let n = 0; n < dir.count; n += 1) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL_SIG) throw damaged('a bad central directory entry');
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const name = buf.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const extra = buf.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    let compressedSize = buf.readUInt32LE(at + 20);
    let size = buf.readUInt32LE(at + 24);
    let localOffset = buf.readUInt32LE(at + 42);
    const need = {
      size: size === 0xffffffff,
      compressed: compressedSize === 0xffffffff,
      offset: localOffset === 0xffffffff,
    };
    if (need.size || need.compressed || need.offset) {
      const values = zip64Extra(extra, need);
      if (need.size) size = values.shift() ?? 0;
      if (need.compressed) compressedSize = values.shift() ?? 0;
      if (need.offset) localOffset = values.shift() ?? 0;
    }
    const flags = buf.readUInt16LE(at + 8);
    if (flags & 0x1) throw refused(`The zip archive has an encrypted entry (${showUntrusted(name)}).`);
    const method = buf.readUInt16LE(at + 10);
    const { kind, mode } = kindOf(buf.readUInt16LE(at + 4), buf.readUInt32LE(at + 38), name);
    entries.push({ name, kind, mode, method, compressedSize, size, localOffset });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Bytes the entries unpack to (files and link targets). */
export const unpackedSize = (entries: readonly ZipEntry[]): number => entries.reduce((sum, e) => sum + e.size, 0);

function dataStart(fd: number, entry: ZipEntry, fileSize: number): number {
  const header = readAt(fd, entry.localOffset, 30);
  if (header.length < 30 || header.readUInt32LE(0) !== LOCAL_SIG)
    throw damaged(`no local header for ${showUntrusted(entry.name)}`);
  const start = entry.localOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (start + entry.compressedSize > fileSize) throw damaged(`${showUntrusted(entry.name)} runs past the end`);
  return start;
}

function entryData(fd: number, entry: ZipEntry, fileSize: number): AsyncIterable<Buffer> {
  const start = dataStart(fd, entry, fileSize);
  if (entry.compressedSize === 0) return (async function* () {})();
  const raw = readRange(fd, start, start + entry.compressedSize);
  if (entry.method === 0) return raw;
  if (entry.method !== 8)
    throw refused(
      `The zip archive uses a compression agyctl does not read (method ${entry.method}, ${showUntrusted(entry.name)}).`,
    );
  return inflated(raw, zlib.createInflateRaw({ chunkSize: 1024 * 1024 }), () =>
    damaged(`${showUntrusted(entry.name)} does not inflate`),
  );
}

async function readAll(chunks: AsyncIterable<Buffer>, max: number): Promise<string> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const c of chunks) {
    total += c.length;
    if (total > max) throw damaged('a link target that is too long');
    parts.push(c);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Unpacks every entry into `target` (entries already read from the central directory). */
export async function unpackZip(
  fd: number,
  fileSize: number,
  entries: readonly ZipEntry[],
  target: UnpackTarget,
): Promise<void> {
  for (const entry of entries) {
    if (entry.kind === 'dir') target.directory(entry);
    else if (entry.kind === 'symlink')
      target.link({ ...entry, link: await readAll(entryData(fd, entry, fileSize), 4096) });
    else if (entry.kind === 'other')
      target.directory(entry); // refused by the target
    else await target.file(entry, entry.size, entryData(fd, entry, fileSize));
  }
  target.finish();
}
