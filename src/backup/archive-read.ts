/**
 * `restore --archive FILE|-`: unpack a snapshot archive into a private
 * staging directory, checking everything before the caller restores from it.
 * The archive is untrusted: the first entry must be manifest.json (at most
 * 16 MB, a valid manifest); every later entry must be a regular file whose
 * name the manifest lists (`<id>.db` or `<id>.meta`, or `brain/<id>/<path>`
 * with the plain segments the manifest was checked for; no other paths, no
 * links, no directories, no tar extensions), once, with exactly the size the
 * manifest gives; its sha256 is computed while it is written and must match.
 * Anything else stops the read with ArchiveError and nothing is restored.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { brainEntryName } from './brain.js';
import { checkManifest, MANIFEST, type Manifest, ManifestError } from './manifest.js';
import { BLOCK, parseHeader, type TarHeader } from './tar.js';

const MANIFEST_MAX = 16 * 1024 * 1024;
const SHA256 = /^[0-9a-f]{64}$/;

export class ArchiveError extends Error {}

/** The archive's manifest declares more bytes than the reader's cap (`backup --max-bytes`): refused before any file is read. */
export class ArchiveTooBig extends ArchiveError {
  constructor(
    readonly declared: number,
    readonly cap: number,
  ) {
    super(`the snapshot holds ${declared} bytes, more than the cap of ${cap}`);
  }
}

/** Runs of zeros this long are left as holes: a sparse file stays sparse, and costs what it holds. */
const HOLE = 64 * 1024;
const ZEROS = Buffer.alloc(HOLE);

/** Pulls exact byte counts out of a chunked stream. */
class StreamReader {
  private buf = Buffer.alloc(0);
  private readonly it: AsyncIterator<Buffer>;
  private done = false;

  constructor(
    private readonly input: Readable,
    private readonly signal?: AbortSignal,
  ) {
    this.it = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** The next chunk, or the abort: a stalled stdin or a long entry never holds up Ctrl-C or TERM. */
  private next(): Promise<IteratorResult<Buffer>> {
    const signal = this.signal;
    if (!signal) return this.it.next();
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.input.destroy();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.it.next().then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (err) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  }

  /** Up to n bytes (fewer only at the end of the stream). */
  async take(n: number): Promise<Buffer> {
    while (this.buf.length < n && !this.done) {
      const next = await this.next();
      if (next.done) this.done = true;
      else this.buf = this.buf.length === 0 ? Buffer.from(next.value) : Buffer.concat([this.buf, next.value]);
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(out.length);
    return out;
  }

  async exactly(n: number, what: string): Promise<Buffer> {
    const b = await this.take(n);
    if (b.length < n) throw new ArchiveError(`the archive ends in the middle of ${what} (truncated?)`);
    return b;
  }

  /** Feed n bytes to `sink` in pieces of at most 1 MB. */
  async stream(n: number, what: string, sink: (piece: Buffer) => void): Promise<void> {
    for (let left = n; left > 0; ) {
      const piece = await this.take(Math.min(left, 1 << 20));
      if (piece.length === 0) throw new ArchiveError(`the archive ends in the middle of ${what} (truncated?)`);
      sink(piece);
      left -= piece.length;
    }
  }
}

const padOf = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK;

async function nextHeader(r: StreamReader): Promise<TarHeader | undefined> {
  const block = await r.take(BLOCK);
  if (block.length === 0) return undefined; // a stream cut exactly at an entry boundary: caught by the "missing" check
  if (block.length < BLOCK) throw new ArchiveError('the archive ends in the middle of a header (truncated?)');
  let header: TarHeader | undefined;
  try {
    header = parseHeader(block);
  } catch (err) {
    throw new ArchiveError((err as Error).message);
  }
  if (header === undefined) return undefined;
  if (header.type !== '0')
    throw new ArchiveError(
      `the archive holds ${JSON.stringify(header.name)} of tar type '${header.type}'; only regular files are accepted`,
    );
  if (
    header.name.length === 0 ||
    (header.name.includes('/') && !header.name.startsWith('brain/')) ||
    header.name === '.' ||
    header.name === '..' ||
    header.name.includes('\0')
  ) {
    throw new ArchiveError(
      `the archive holds an entry with a path or a bad name (${JSON.stringify(header.name)}); only plain names are accepted`,
    );
  }
  return header;
}

interface Expected {
  bytes: number;
  sha256: string;
  seen: boolean;
}

function expectedFiles(manifest: Manifest, reusedWithoutDb: boolean): Map<string, Expected> {
  const files = new Map<string, Expected>();
  const add = (name: string, bytes: unknown, sha256: unknown, wanted: string): void => {
    if (
      name !== wanted ||
      !Number.isSafeInteger(bytes) ||
      (bytes as number) < 0 ||
      typeof sha256 !== 'string' ||
      !SHA256.test(sha256) ||
      files.has(name)
    ) {
      throw new ArchiveError(`the archive's manifest lists an unexpected file entry (${JSON.stringify(name)})`);
    }
    files.set(name, { bytes: bytes as number, sha256, seen: false });
  };
  for (const s of manifest.sessions) {
    if (reusedWithoutDb && s.reused === true) {
      // Not in the stream: the reader has it (root's previous snapshot); the name is still checked.
      if (s.file !== `${s.id}.db`)
        throw new ArchiveError(`the archive's manifest lists an unexpected file entry (${JSON.stringify(s.file)})`);
    } else add(s.file, s.bytes, s.sha256, `${s.id}.db`);
    if (s.meta) add(s.meta.file, s.meta.bytes, s.meta.sha256, `${s.id}.meta`);
    // Brain names were checked with the manifest (plain segments inside brain/<id>/).
    for (const f of s.brain?.files ?? []) {
      const name = brainEntryName(s.id, f.path);
      add(name, f.bytes, f.sha256, name);
    }
  }
  return files;
}

async function readManifestEntry(r: StreamReader, staging: string): Promise<Manifest> {
  const header = await nextHeader(r);
  if (!header) throw new ArchiveError('the archive is empty');
  if (header.name !== MANIFEST)
    throw new ArchiveError(
      `the archive does not start with ${MANIFEST} (first entry ${JSON.stringify(header.name)}); was it made by \`agyctl backup --archive\`?`,
    );
  if (header.size > MANIFEST_MAX)
    throw new ArchiveError(`the archive's ${MANIFEST} is ${header.size} bytes; at most ${MANIFEST_MAX} are accepted`);
  const text = await r.exactly(header.size, MANIFEST);
  await r.exactly(padOf(header.size), MANIFEST);
  let manifest: Manifest;
  try {
    manifest = checkManifest(JSON.parse(text.toString('utf8')), `the archive's ${MANIFEST}`);
  } catch (err) {
    // A newer agyctl's snapshot is not a damaged archive: it gets the directory's error and exit code.
    if (err instanceof ManifestError && err.problem === 'newer') throw err;
    throw new ArchiveError(err instanceof ManifestError ? err.message : `the archive's ${MANIFEST} is not JSON`);
  }
  fs.writeFileSync(path.join(staging, MANIFEST), text, { flag: 'wx', mode: 0o600 });
  return manifest;
}

/** Writes `piece` at `position`, skipping every aligned 64 KB run of zeros (left a hole). */
function writeSparse(fd: number, piece: Buffer, position: number): void {
  for (let off = 0; off < piece.length; ) {
    const len = Math.min(HOLE - ((position + off) % HOLE), piece.length - off);
    const run = piece.subarray(off, off + len);
    if (!run.equals(ZEROS.subarray(0, len))) fs.writeSync(fd, run, 0, len, position + off);
    off += len;
  }
}

async function readFileEntry(r: StreamReader, header: TarHeader, want: Expected, staging: string): Promise<void> {
  const hash = crypto.createHash('sha256');
  const target = path.join(staging, ...header.name.split('/'));
  // A brain file's directories, made by us inside our private staging dir (the name is one the manifest lists).
  if (header.name.includes('/')) fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const fd = fs.openSync(
    target,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    0o600,
  );
  try {
    let at = 0;
    await r.stream(header.size, header.name, (piece) => {
      hash.update(piece);
      writeSparse(fd, piece, at);
      at += piece.length;
    });
    fs.ftruncateSync(fd, header.size); // a file that ends in a hole
  } finally {
    fs.closeSync(fd);
  }
  await r.exactly(padOf(header.size), header.name);
  const actual = hash.digest('hex');
  if (actual !== want.sha256)
    throw new ArchiveError(
      // No hash of what was read: the bytes may be someone else's (root streams for another user).
      `${header.name} in the archive does not match its manifest hash`,
    );
}

/**
 * Reads the whole archive into `staging` (an empty private directory) and
 * returns its manifest; on any problem throws ArchiveError (the caller
 * removes the staging directory). `reusedWithoutDb`: a session marked reused
 * comes without its database (root's backup of a user's state dir, which
 * links its own copy after checking it).
 */
export async function readArchive(
  input: Readable,
  staging: string,
  signal?: AbortSignal,
  maxBytes = Number.POSITIVE_INFINITY,
  { reusedWithoutDb = false }: { reusedWithoutDb?: boolean } = {},
): Promise<Manifest> {
  const r = new StreamReader(input, signal);
  const manifest = await readManifestEntry(r, staging);
  const expected = expectedFiles(manifest, reusedWithoutDb);
  // Every entry must be exactly its declared size: the declared total bounds what is written.
  const declared = [...expected.values()].reduce((n, e) => n + e.bytes, 0);
  if (declared > maxBytes) throw new ArchiveTooBig(declared, maxBytes);
  for (let header = await nextHeader(r); header; header = await nextHeader(r)) {
    signal?.throwIfAborted();
    const want = expected.get(header.name);
    if (!want)
      throw new ArchiveError(`the archive holds ${JSON.stringify(header.name)}, which its manifest does not list`);
    if (want.seen) throw new ArchiveError(`the archive holds ${header.name} twice`);
    if (header.size !== want.bytes)
      throw new ArchiveError(`${header.name} in the archive is ${header.size} bytes; the manifest says ${want.bytes}`);
    want.seen = true;
    await readFileEntry(r, header, want, staging);
  }
  const missing = [...expected].filter(([, e]) => !e.seen).map(([name]) => name);
  if (missing.length > 0)
    throw new ArchiveError(
      `the archive lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''} (truncated?)`,
    );
  return manifest;
}
