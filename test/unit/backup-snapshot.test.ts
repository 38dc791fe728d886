// Real SQLite, a real live writer: why VACUUM INTO, and what it guarantees.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { snapshotDb } from '../../src/backup/backup-session.js';
import { SyncBatch, sha256File } from '../../src/backup/files.js';
import { SnapshotError } from '../../src/backup/snapshot-work.js';
import { openReadOnly } from '../../src/backup/sqlite.js';
import { WorkerPool } from '../../src/backup/worker-pool.js';
import { useScratch } from '../helpers/scratch.js';
import { startWriter } from '../helpers/wal-writer.js';

const SEVEN = [
  'battle_mode_infos',
  'executor_metadata',
  'gen_metadata',
  'parent_references',
  'steps',
  'trajectory_meta',
  'trajectory_metadata_blob',
];

const { tmp, keepWriter } = useScratch('agyctl-snap-');

/** The pool in its in-thread mode: the same task functions a backup run's workers run, on this thread. */
function inThread(): { pool: WorkerPool; sync: SyncBatch } {
  return { pool: new WorkerPool(2, { inThread: true }), sync: new SyncBatch() };
}

function tables(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (
      db.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").all() as Array<{ name: string }>
    ).map((r) => r.name);
  } finally {
    db.close();
  }
}

describe('snapshotDb', () => {
  it('captures schema and rows that still sit in the WAL, where a copy of the .db file alone reads empty', async () => {
    const dir = tmp();
    const db = path.join(dir, 'live.db');
    const writer = await startWriter(db, ['--initial-rows', '25', '--interval-ms', '60000']);
    keepWriter(writer);
    expect(fs.statSync(`${db}-wal`).size).toBeGreaterThan(0);

    const copy = path.join(dir, 'copy.db');
    fs.copyFileSync(db, copy);
    expect(tables(copy)).toEqual([]);

    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const result = await snapshotDb(db, out, 'snap.db', 5000, inThread());
    expect(tables(path.join(out, 'snap.db'))).toEqual(SEVEN);
    expect(result.integrity).toBe('ok');
    expect(result.rows.steps).toBe(writer.initialRows);
    expect(result.rows.gen_metadata).toBe(writer.initialRows);
    expect(result.sha256).toBe(sha256File(path.join(out, 'snap.db')));
    expect(fs.readdirSync(out)).toEqual(['snap.db']); // no temp file, no -wal/-shm next to the snapshot
    // The server's files were not rewritten: its WAL is still there and still holds everything.
    expect(fs.statSync(`${db}-wal`).size).toBeGreaterThan(0);
  });

  it('under continuous writes holds a consistent prefix: every commit whole, none missing in between', async () => {
    const dir = tmp();
    const db = path.join(dir, 'live.db');
    const writer = await startWriter(db, ['--initial-rows', '200', '--interval-ms', '2', '--blob-bytes', '30000']);
    keepWriter(writer);
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    for (let i = 0; i < 3; i += 1) {
      const name = `snap${i}.db`;
      const result = await snapshotDb(db, out, name, 5000, inThread());
      expect(result.integrity).toBe('ok');
      const snap = openReadOnly(path.join(out, name), 0);
      const steps = snap.prepare('SELECT count(*) AS n, min(idx) AS lo, max(idx) AS hi FROM steps').get() as {
        n: number;
        lo: number;
        hi: number;
      };
      expect(steps.lo).toBe(0);
      expect(steps.n).toBe(steps.hi + 1);
      expect(steps.n).toBeGreaterThanOrEqual(200);
      // steps and gen_metadata are written in one transaction: equal counts, matching digests.
      const torn = snap
        .prepare(
          'SELECT count(*) AS n FROM steps s LEFT JOIN gen_metadata g ON g.idx = s.idx WHERE g.data IS NULL OR g.data != s.metadata',
        )
        .get() as { n: number };
      expect(torn.n).toBe(0);
      expect((snap.prepare('SELECT count(*) AS n FROM gen_metadata').get() as { n: number }).n).toBe(steps.n);
      snap.close();
    }
    expect(await writer.stop()).toBeGreaterThan(200);
  });

  it('gives up on a database locked by an exclusive writer within the busy budget', async () => {
    const dir = tmp();
    const db = path.join(dir, 'locked.db');
    keepWriter(await startWriter(db, ['--exclusive', '--initial-rows', '3', '--interval-ms', '60000']));
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const started = Date.now();
    let caught: unknown;
    try {
      await snapshotDb(db, out, 'x.db', 600, inThread());
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SnapshotError);
    expect((caught as SnapshotError).code).toBe('busy');
    expect((caught as Error).message).toMatch(/locked/);
    expect(Date.now() - started).toBeLessThan(30_000); // bounded (the exact time is not asserted)
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it('checks and hashes a large copy in two tasks at once, the path a backup run takes for it', async () => {
    const dir = tmp();
    const db = path.join(dir, 'big.db');
    const conn = new Database(db);
    conn.exec('CREATE TABLE steps (idx INTEGER PRIMARY KEY, data BLOB)');
    const insert = conn.prepare('INSERT INTO steps (data) VALUES (randomblob(65536))');
    conn.transaction(() => {
      for (let i = 0; i < 160; i += 1) insert.run();
    })();
    conn.close();
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const run = inThread();
    const result = await snapshotDb(db, out, 'big.db', 5000, run);
    await run.sync.flush();
    expect(result.bytes).toBeGreaterThan(8 * 1024 * 1024);
    expect(result.rows).toEqual({ steps: 160 });
    expect(result.integrity).toBe('ok');
    expect(result.sha256).toBe(sha256File(path.join(out, 'big.db')));
    expect(fs.statSync(path.join(out, 'big.db')).mode & 0o777).toBe(0o600);
  });

  it('never creates a database at a wrong path', async () => {
    const dir = tmp();
    const missing = path.join(dir, 'nope.db');
    await expect(snapshotDb(missing, dir, 'x.db', 100, inThread())).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
