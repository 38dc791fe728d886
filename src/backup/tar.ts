/**
 * The little of POSIX ustar that snapshot archives need: regular files,
 * written and read as a stream (names longer than 100 bytes use the ustar
 * prefix field). Hand-written (about 100 lines)
 * rather than a dependency: we only ever write regular files, and the
 * reader must reject everything else anyway (links, directories, paths, pax
 * and GNU extensions), which is simpler to prove for our own few lines.
 * Sizes of 8 GiB and more use the GNU base-256 size field, which GNU tar,
 * bsdtar and restic's stdin mode all handle.
 */
export const BLOCK = 512;
const OCTAL_MAX = 0o77777777777;

export interface TarHeader {
  name: string;
  size: number;
  mode: number;
  mtime: number;
  type: string;
}

function writeString(buf: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new Error(`tar field too long: ${value}`);
  bytes.copy(buf, offset);
}

function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  writeString(buf, offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

function writeSize(buf: Buffer, value: number): void {
  if (value <= OCTAL_MAX) {
    writeOctal(buf, 124, 12, value);
    return;
  }
  buf[124] = 0x80; // GNU base-256: big-endian in the remaining 11 bytes
  let v = BigInt(value);
  for (let i = 135; i > 124; i -= 1) {
    buf[i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/**
 * Where a name longer than the 100-byte name field is split between ustar's
 * prefix (155 bytes) and name fields: at a '/'. undefined when it cannot be.
 */
function splitName(name: string): { prefix: string; rest: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', rest: name };
  for (let i = name.indexOf('/'); i > 0; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest.length > 0) return { prefix, rest };
  }
  return undefined;
}

/** Whether `name` fits a ustar header (name, or prefix + name). */
export function ustarFits(name: string): boolean {
  return splitName(name) !== undefined;
}

/** One 512-byte ustar header for a regular file. */
export function fileHeader(name: string, size: number, mtimeSec: number, mode = 0o600): Buffer {
  const buf = Buffer.alloc(BLOCK);
  const split = splitName(name);
  if (!split) throw new Error(`tar field too long: ${name}`);
  writeString(buf, 0, 100, split.rest);
  writeString(buf, 345, 155, split.prefix);
  writeOctal(buf, 100, 8, mode);
  writeOctal(buf, 108, 8, 0);
  writeOctal(buf, 116, 8, 0);
  writeSize(buf, size);
  writeOctal(buf, 136, 12, Math.max(0, Math.floor(mtimeSec)));
  buf.fill(0x20, 148, 156); // checksum counts as spaces while it is computed
  buf[156] = 0x30; // '0': regular file
  writeString(buf, 257, 6, 'ustar\0');
  writeString(buf, 263, 2, '00');
  let sum = 0;
  for (const b of buf) sum += b;
  writeString(buf, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return buf;
}

/** Zero bytes that round `size` up to a whole block. */
export function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** The end-of-archive marker: two zero blocks. */
export const END = Buffer.alloc(2 * BLOCK);

function readString(buf: Buffer, offset: number, length: number): string {
  const field = buf.subarray(offset, offset + length);
  const nul = field.indexOf(0);
  return field.subarray(0, nul < 0 ? length : nul).toString('utf8');
}

function readOctal(buf: Buffer, offset: number, length: number, what: string): number {
  if (what === 'size' && (buf[offset]! & 0x80) !== 0) {
    let v = 0n;
    for (let i = offset + 1; i < offset + length; i += 1) v = (v << 8n) | BigInt(buf[i]!);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('tar entry size out of range');
    return Number(v);
  }
  const text = readString(buf, offset, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new Error(`bad tar ${what} field`);
  return parseInt(text, 8);
}

/** undefined for a zero block (end of archive); throws on a damaged header. */
export function parseHeader(buf: Buffer): TarHeader | undefined {
  if (buf.every((b) => b === 0)) return undefined;
  const stored = readOctal(buf, 148, 8, 'checksum');
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : buf[i]!;
  if (sum !== stored) throw new Error('tar header checksum mismatch (not a tar archive, or damaged)');
  const prefix = buf.subarray(257, 262).toString('latin1') === 'ustar' ? readString(buf, 345, 155) : '';
  const name = readString(buf, 0, 100);
  return {
    name: prefix ? `${prefix}/${name}` : name,
    size: readOctal(buf, 124, 12, 'size'),
    mode: readOctal(buf, 100, 8, 'mode'),
    mtime: readOctal(buf, 136, 12, 'mtime'),
    type: buf[156] === 0 ? '0' : String.fromCharCode(buf[156]!),
  };
}
