// The archive reader treats its input as untrusted: only the manifest's plain
// file names, regular files, exact sizes and matching hashes get through.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ArchiveError, readArchive } from '../../src/backup/archive-read.js';
import { writeArchive } from '../../src/backup/archive-write.js';
import { END, fileHeader, padding, parseHeader } from '../../src/backup/tar.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-archive-');
const ID = '4d5a6c89-0be5-4d98-ac4d-dede75c780fe';
const DB = Buffer.from('SQLite format 3\0 pretend database content');
const sha = (b: Buffer): string => crypto.createHash('sha256').update(b).digest('hex');

function manifest(overrides: Record<string, unknown> = {}): Buffer {
  const session = {
    id: ID,
    cwd: '/p',
    file: `${ID}.db`,
    bytes: DB.length,
    sha256: sha(DB),
    integrity: 'ok',
    rows: {},
    meta: null,
    reused: false,
    source: {},
    ...overrides,
  };
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 1,
      kind: 'agyctl-backup',
      created: new Date(0).toISOString(),
      host: 'h',
      agyctlVersion: '0',
      sourceStateDir: '/s',
      sessions: [session],
      failed: [],
    }),
  );
}

function entry(name: string, data: Buffer, type = '0'): Buffer {
  const h = fileHeader(name, data.length, 0);
  if (type !== '0') {
    h[156] = type.charCodeAt(0);
    let sum = 0;
    h.fill(0x20, 148, 156);
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  }
  return Buffer.concat([h, data, padding(data.length)]);
}

const PLAN = Buffer.from('# plan\n');
const brainOf = (p: string): unknown => ({
  files: [{ path: p, bytes: PLAN.length, sha256: sha(PLAN) }],
  skipped: [],
  checkedAt: new Date(0).toISOString(),
});

async function read(parts: Buffer[]): Promise<unknown> {
  const dir = tmp();
  return readArchive(Readable.from([Buffer.concat(parts)]), dir);
}

describe('snapshot archives', () => {
  it('writes a ustar stream (manifest first) that reads back into identical files, across odd chunk boundaries', async () => {
    const snap = tmp();
    fs.writeFileSync(path.join(snap, `${ID}.db`), DB);
    fs.writeFileSync(path.join(snap, 'manifest.json'), manifest());
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await writeArchive(snap, out);
    const tar = Buffer.concat(chunks);
    expect(parseHeader(tar.subarray(0, 512))).toMatchObject({ name: 'manifest.json', type: '0', mode: 0o600 });
    const pieces = [];
    for (let i = 0; i < tar.length; i += 333) pieces.push(tar.subarray(i, i + 333));
    const dest = tmp();
    await readArchive(Readable.from(pieces), dest);
    expect(fs.readFileSync(path.join(dest, `${ID}.db`))).toEqual(DB);
    expect(fs.statSync(path.join(dest, `${ID}.db`)).mode & 0o777).toBe(0o600);
  });

  it('accepts a well-formed archive', async () => {
    await expect(read([entry('manifest.json', manifest()), entry(`${ID}.db`, DB), END])).resolves.toMatchObject({
      sessions: [{ id: ID }],
    });
  });

  it.each([
    ['a path', [entry('manifest.json', manifest()), entry(`../${ID}.db`, DB), END], /path or a bad name/],
    ['a symlink', [entry('manifest.json', manifest()), entry(`${ID}.db`, Buffer.alloc(0), '2'), END], /tar type '2'/],
    [
      'a pax header',
      [entry('manifest.json', manifest()), entry('PaxHeader', Buffer.from('x'), 'x'), END],
      /tar type 'x'/,
    ],
    [
      'a name the manifest does not list',
      [entry('manifest.json', manifest()), entry('other.db', DB), END],
      /does not list/,
    ],
    ['a file twice', [entry('manifest.json', manifest()), entry(`${ID}.db`, DB), entry(`${ID}.db`, DB), END], /twice/],
    [
      'a size that differs from the manifest',
      [entry('manifest.json', manifest({ bytes: DB.length + 1 })), entry(`${ID}.db`, DB), END],
      /manifest says/,
    ],
    [
      'content that does not match its hash',
      [entry('manifest.json', manifest()), entry(`${ID}.db`, Buffer.from(DB).fill(0x41, 20)), END],
      /does not match its manifest hash/,
    ],
    [
      'no manifest first',
      [entry(`${ID}.db`, DB), entry('manifest.json', manifest()), END],
      /does not start with manifest.json/,
    ],
    [
      'a manifest naming a file outside the pattern',
      [entry('manifest.json', manifest({ file: 'x.db' })), END],
      /unexpected file entry/,
    ],
    ['a missing file (truncated at an entry boundary)', [entry('manifest.json', manifest())], /lacks/],
    ['a truncated entry', [entry('manifest.json', manifest()), entry(`${ID}.db`, DB).subarray(0, 600)], /truncated/],
    ['not a tar at all', [Buffer.alloc(1024, 0x41)], /checksum/],
    [
      'a manifest whose brain path climbs out of brain/<id>/',
      [entry('manifest.json', manifest({ brain: brainOf('../../evil') })), END],
      /malformed session entry/,
    ],
    [
      'a brain entry the manifest does not list',
      [
        entry('manifest.json', manifest({ brain: brainOf('plan.md') })),
        entry(`${ID}.db`, DB),
        entry(`brain/${ID}/other.md`, PLAN),
        END,
      ],
      /does not list/,
    ],
    [
      'a brain entry with a traversal in its name',
      [
        entry('manifest.json', manifest({ brain: brainOf('plan.md') })),
        entry(`${ID}.db`, DB),
        entry(`brain/${ID}/../../plan.md`, PLAN),
        END,
      ],
      /does not list/,
    ],
  ])('rejects %s', async (_what, parts, message) => {
    const dir = tmp();
    const err = await readArchive(Readable.from([Buffer.concat(parts as Buffer[])]), dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArchiveError);
    expect((err as Error).message).toMatch(message);
    expect(fs.readdirSync(dir).filter((n) => n !== 'manifest.json' && !n.endsWith('.db'))).toEqual([]);
  });

  it("carries a session's brain files, nested and with names past tar's 100-byte field, into the same paths", async () => {
    const deep = `notes/${'d'.repeat(60)}/${'e'.repeat(60)}/plan.md`;
    const snap = tmp();
    fs.writeFileSync(path.join(snap, `${ID}.db`), DB);
    fs.mkdirSync(path.join(snap, 'brain', ID, ...deep.split('/').slice(0, -1)), { recursive: true });
    fs.writeFileSync(path.join(snap, 'brain', ID, ...deep.split('/')), PLAN);
    fs.writeFileSync(path.join(snap, 'manifest.json'), manifest({ brain: brainOf(deep) }));
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await writeArchive(snap, out);
    const dest = tmp();
    await readArchive(Readable.from([Buffer.concat(chunks)]), dest);
    expect(fs.readFileSync(path.join(dest, 'brain', ID, ...deep.split('/')))).toEqual(PLAN);
  });

  it('encodes sizes of 8 GiB and more in base-256 and reads them back', () => {
    const big = 9 * 1024 ** 3;
    expect(parseHeader(fileHeader(`${ID}.db`, big, 0))?.size).toBe(big);
  });
});
