// Root's side of reuse on a user's state dir: what the owner's side claims is checked against root's own snapshot.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Previous } from '../../src/backup/backup-session.js';
import { MANIFEST_SCHEMA, type Manifest, type ManifestSession } from '../../src/backup/manifest.js';
import { adoptReused, previousFromHints, reuseHints } from '../../src/backup/owner-reuse.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-owner-reuse-');
const ID = '44444444-4444-4444-8444-444444444444';
const sha = (b: Buffer): string => crypto.createHash('sha256').update(b).digest('hex');
const source = {
  db: { inode: '12', size: 4096, mtimeNs: '1700000000000000000', mtime: '2023-11-14T22:13:20.000Z' },
  wal: null,
  checkedAt: '2023-11-14T23:00:00.000Z',
};

/** Root's previous snapshot with one session, whose file holds `content`. */
function rootsPrevious(content: Buffer): Previous {
  const dir = path.join(tmp(), 'prev');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, `${ID}.db`), content, { mode: 0o600 });
  const s: ManifestSession = {
    id: ID,
    cwd: '/w',
    file: `${ID}.db`,
    bytes: content.length,
    sha256: sha(content),
    integrity: 'ok',
    rows: { steps: 7 },
    compacted: false,
    meta: null,
    reused: false,
    source,
  };
  return { name: '2026-01-01T00-00-00.000Z', dir, sessions: new Map([[ID, s]]) };
}

function claim(over: Partial<ManifestSession>, prev: Previous): Manifest {
  const p = prev.sessions.get(ID)!;
  return {
    schemaVersion: MANIFEST_SCHEMA,
    kind: 'agyctl-backup',
    created: '2026-01-02T00:00:00.000Z',
    host: 'h',
    agyctlVersion: '0',
    sourceStateDir: '/s',
    sessions: [{ ...p, rows: { steps: 999 }, integrity: 'ok', reused: true, reusedFrom: 'root', ...over }],
    failed: [],
  };
}

describe("root adopts the owner's reused sessions only when they match its own snapshot", () => {
  it("links root's own file and keeps root's record, not the claim's", () => {
    const prev = rootsPrevious(Buffer.from('root file'));
    const work = path.join(tmp(), 'work');
    fs.mkdirSync(work);
    const m = claim({}, prev);
    expect(adoptReused(m, work, prev)).toBe(true);
    expect(m.sessions[0]).toMatchObject({ rows: { steps: 7 }, reused: true, reusedFrom: prev.name, compacted: false });
    expect(fs.readFileSync(path.join(work, `${ID}.db`), 'utf8')).toBe('root file');
  });

  it.each([
    ['another hash', { sha256: 'a'.repeat(64) }],
    ['another size', { bytes: 3 }],
    ['another db identity', { source: { ...source, db: { ...source.db, inode: '13' } } }],
    ['a WAL root did not see', { source: { ...source, wal: source.db } }],
    ['a malformed source', { source: null as unknown as ManifestSession['source'] }],
    [
      'a session root has not',
      { id: '55555555-5555-4555-8555-555555555555', file: '55555555-5555-4555-8555-555555555555.db' },
    ],
  ])('refuses a claim with %s', (_what, over) => {
    const prev = rootsPrevious(Buffer.from('root file'));
    const work = path.join(tmp(), 'work');
    fs.mkdirSync(work);
    expect(adoptReused(claim(over as Partial<ManifestSession>, prev), work, prev)).toBe(false);
  });

  it("refuses when root's own previous file no longer hashes to its record", () => {
    const prev = rootsPrevious(Buffer.from('root file'));
    fs.writeFileSync(path.join(prev.dir, `${ID}.db`), 'root fil!');
    const work = path.join(tmp(), 'work');
    fs.mkdirSync(work);
    expect(adoptReused(claim({}, prev), work, prev)).toBe(false);
  });

  it("the owner's side reads root's hints back, and refuses malformed ones", () => {
    const prev = rootsPrevious(Buffer.from('root file'));
    const hints = JSON.parse(JSON.stringify({ sessions: reuseHints(prev) }));
    const back = previousFromHints(hints);
    expect(back.remote).toBe(true);
    expect(back.sessions.get(ID)).toMatchObject({ sha256: prev.sessions.get(ID)!.sha256, source });
    for (const bad of [
      null,
      { sessions: 'x' },
      { sessions: [{ ...hints.sessions[0], id: '../x' }] },
      { sessions: [{ ...hints.sessions[0], file: '../../etc/passwd' }] },
      { sessions: [{ ...hints.sessions[0], sha256: 'zz' }] },
      { sessions: [{ ...hints.sessions[0], source: { db: { inode: 'x' } } }] },
    ])
      expect(() => previousFromHints(bad), JSON.stringify(bad)).toThrow();
  });
});
