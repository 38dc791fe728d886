import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canReuse, QUIET_MS } from '../../src/backup/backup-session.js';
import { discoverSessions } from '../../src/backup/discover.js';
import { type FileIdentity, identityOf } from '../../src/backup/file-identity.js';
import type { ManifestSession } from '../../src/backup/manifest.js';
import { useScratch } from '../helpers/scratch.js';
import { startWriter } from '../helpers/wal-writer.js';

const { tmp, keepWriter } = useScratch('agyctl-reuse-');

const ident = (mtimeMs: number, size = 4096, inode = '42'): FileIdentity => ({
  inode,
  size,
  mtimeNs: String(BigInt(mtimeMs) * 1_000_000n),
  mtime: new Date(mtimeMs).toISOString(),
});

function prevEntry(prevDir: string, db: FileIdentity, wal: FileIdentity | null, checkedAtMs: number): ManifestSession {
  fs.writeFileSync(path.join(prevDir, 'x.db'), Buffer.alloc(100));
  return {
    id: 'x',
    cwd: null,
    file: 'x.db',
    bytes: 100,
    sha256: 'h',
    integrity: 'ok',
    rows: {},
    meta: null,
    reused: false,
    source: { db, wal, checkedAt: new Date(checkedAtMs).toISOString() },
  };
}

describe('reuse of unchanged sessions', () => {
  const now = Date.parse('2026-09-03T12:00:00Z');
  const old = now - 60_000;

  it('reuses when db and WAL identities match and both runs saw them quiet', () => {
    const dir = tmp();
    const prev = prevEntry(dir, ident(old), ident(old, 999, '43'), old + 10_000);
    expect(
      canReuse(prev, { db: ident(old), wal: ident(old, 999, '43'), checkedAt: new Date(now).toISOString() }, dir),
    ).toBe(true);
  });

  it('does not reuse when any of inode, size or mtime of db or WAL differs, or the WAL appeared', () => {
    const dir = tmp();
    const prev = prevEntry(dir, ident(old), ident(old, 999, '43'), old + 10_000);
    const at = new Date(now).toISOString();
    expect(canReuse(prev, { db: ident(old, 4096, '99'), wal: ident(old, 999, '43'), checkedAt: at }, dir)).toBe(false);
    expect(canReuse(prev, { db: ident(old), wal: ident(old, 1000, '43'), checkedAt: at }, dir)).toBe(false);
    expect(canReuse(prev, { db: ident(old + 1), wal: ident(old, 999, '43'), checkedAt: at }, dir)).toBe(false);
    expect(canReuse(prev, { db: ident(old), wal: null, checkedAt: at }, dir)).toBe(false);
  });

  it('applies the 2-second rule now and at the previous stat', () => {
    const dir = tmp();
    const recent = now - QUIET_MS + 500;
    const fresh = prevEntry(dir, ident(recent), null, recent + 10);
    expect(canReuse(fresh, { db: ident(recent), wal: null, checkedAt: new Date(now).toISOString() }, dir)).toBe(false);
    // quiet now, but the previous run looked within 2 s of the last write: a same-tick write could hide
    const looked = prevEntry(dir, ident(old), null, old + 1000);
    expect(canReuse(looked, { db: ident(old), wal: null, checkedAt: new Date(now).toISOString() }, dir)).toBe(false);
  });

  it('does not reuse when the previous snapshot file is gone or has another size', () => {
    const dir = tmp();
    const prev = prevEntry(dir, ident(old), null, old + 10_000);
    const state = { db: ident(old), wal: null, checkedAt: new Date(now).toISOString() };
    fs.writeFileSync(path.join(dir, 'x.db'), Buffer.alloc(99));
    expect(canReuse(prev, state, dir)).toBe(false);
    fs.rmSync(path.join(dir, 'x.db'));
    expect(canReuse(prev, state, dir)).toBe(false);
  });

  it('(inode, size, mtime) of db and WAL change on every commit of a live writer', async () => {
    const dir = tmp();
    const db = path.join(dir, 'live.db');
    const writer = await startWriter(db, ['--initial-rows', '1', '--interval-ms', '5', '--blob-bytes', '100']);
    keepWriter(writer);
    const before = { db: identityOf(db), wal: identityOf(`${db}-wal`) };
    const deadline = Date.now() + 10_000;
    let after = before;
    while (Date.now() < deadline && JSON.stringify(after) === JSON.stringify(before)) {
      await new Promise((r) => setTimeout(r, 20));
      after = { db: identityOf(db), wal: identityOf(`${db}-wal`) };
    }
    expect(after.wal?.size).toBeGreaterThan(before.wal!.size);
  });
});

describe('discoverSessions', () => {
  it('lists every conversation newest first, broken ones with the reason, and who holds them open', async () => {
    const state = tmp();
    const conv = path.join(state, 'conversations');
    fs.mkdirSync(conv);
    const live = '11111111-2222-4333-8444-555555555555';
    const junk = '22222222-2222-4333-8444-555555555555';
    const orphan = '33333333-2222-4333-8444-555555555555';
    fs.writeFileSync(path.join(conv, `${live}.meta`), JSON.stringify({ cwd: '/srv/p' }));
    fs.writeFileSync(path.join(conv, `${junk}.db`), 'not sqlite at all');
    fs.writeFileSync(path.join(conv, `${junk}.meta`), '{broken');
    fs.writeFileSync(path.join(conv, `${orphan}.meta`), JSON.stringify({ cwd: '/x' }));
    fs.writeFileSync(path.join(conv, 'notes.txt'), 'ignored');
    const writer = await startWriter(path.join(conv, `${live}.db`), ['--initial-rows', '2', '--interval-ms', '60000']);
    keepWriter(writer);
    const old = new Date(Date.now() - 3_600_000);
    fs.utimesSync(path.join(conv, `${junk}.db`), old, old);

    const found = discoverSessions(state)!;
    expect(found.map((s) => s.id)).toEqual([live, junk, orphan]);
    const [a, b, c] = found;
    expect(a).toMatchObject({ cwd: '/srv/p', problem: null, readable: true, openBy: [writer.pid] });
    expect(a!.bytes).toBe(a!.dbBytes + a!.walBytes);
    expect(a!.walBytes).toBeGreaterThan(0);
    expect(b).toMatchObject({ cwd: null, readable: false, openBy: [] });
    expect(b!.problem).toMatch(/not a SQLite database.*\.meta is not valid JSON/);
    expect(c).toMatchObject({ cwd: '/x', readable: false, modified: null });
    expect(c!.problem).toMatch(/no database file/);
    expect(discoverSessions(path.join(state, 'nope'))).toBeUndefined();
  });
});
