// Real SQLite, a real live writer: why VACUUM INTO, and what it guarantees.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { snapshotDb } from '../../src/backup/backup-session.js';
import { copyLiveDatabase, isOneState, type LiveLook } from '../../src/backup/live-copy.js';
import { SyncBatch } from '../../src/backup/snapshot-files.js';
import { SnapshotError } from '../../src/backup/snapshot-work.js';
import { openReadOnly } from '../../src/backup/sqlite.js';
import { WorkerPool } from '../../src/backup/worker-pool.js';
import { sha256File } from '../../src/util/os/file-hash.js';
import { useScratch } from '../helpers/scratch.js';
import { changes, listTree } from '../helpers/state-listing.js';
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

/** A snapshot that is one committed state: steps 0..n-1 all there, each with its gen_metadata row of the same commit. */
async function expectOneState(db: string, out: string, name: string, atLeast: number): Promise<void> {
  const result = await snapshotDb(db, path.join(out, name), { busyBudgetMs: 5000 }, inThread());
  expect(result.integrity).toBe('ok');
  const snap = openReadOnly(path.join(out, name), 0);
  try {
    const steps = snap.prepare('SELECT count(*) AS n, min(idx) AS lo, max(idx) AS hi FROM steps').get() as {
      n: number;
      lo: number;
      hi: number;
    };
    expect(steps.lo).toBe(0);
    expect(steps.n).toBe(steps.hi + 1);
    expect(steps.n).toBeGreaterThanOrEqual(atLeast);
    // steps and gen_metadata are written in one transaction: equal counts, matching digests.
    const torn = snap
      .prepare(
        'SELECT count(*) AS n FROM steps s LEFT JOIN gen_metadata g ON g.idx = s.idx WHERE g.data IS NULL OR g.data != s.metadata',
      )
      .get() as { n: number };
    expect(torn.n).toBe(0);
    expect((snap.prepare('SELECT count(*) AS n FROM gen_metadata').get() as { n: number }).n).toBe(steps.n);
  } finally {
    snap.close();
  }
}

/** What makes a copy of the writer's database not one state: integrity problems, gaps, rows of a half commit, payloads that do not match their digest. */
function tornIn(file: string): string[] {
  const problems: string[] = [];
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const integrity = (db.pragma('integrity_check') as Array<{ integrity_check: string }>)[0]!.integrity_check;
    if (integrity !== 'ok') problems.push(integrity);
    const steps = db.prepare('SELECT count(*) AS n, max(idx) AS hi FROM steps').get() as { n: number; hi: number };
    if (steps.n !== steps.hi + 1) problems.push(`${steps.n} steps up to idx ${steps.hi}`);
    const gen = db.prepare('SELECT count(*) AS n FROM gen_metadata').get() as { n: number };
    if (gen.n !== steps.n) problems.push(`${steps.n} steps, ${gen.n} gen_metadata rows`);
    for (const row of db.prepare('SELECT idx, metadata, step_payload FROM steps').iterate() as Iterable<{
      idx: number;
      metadata: Buffer;
      step_payload: Buffer;
    }>) {
      if (!crypto.createHash('sha256').update(row.step_payload).digest().equals(row.metadata))
        problems.push(`step ${row.idx}: payload does not match its digest`);
    }
  } catch (err) {
    problems.push(String(err));
  } finally {
    db?.close();
  }
  return problems;
}

type FileState = 'closed' | 'wal, no shm' | 'wal and shm' | 'held by a writer' | 'held, WAL truncated';

/** A database in `live.db` of a fresh dir, its sidecars as `state` says (a writer that is held stays idle). */
async function databaseIn(state: FileState): Promise<{ dir: string; db: string }> {
  const dir = tmp();
  const db = path.join(dir, 'live.db');
  if (state === 'closed') {
    const conn = new Database(db);
    conn.pragma('journal_mode = WAL');
    conn.exec("CREATE TABLE steps (idx INTEGER PRIMARY KEY, data BLOB); INSERT INTO steps (data) VALUES (x'01')");
    conn.close();
    return { dir, db };
  }
  const args = ['--initial-rows', '20', '--interval-ms', '600000'];
  const writer = await startWriter(db, state === 'held, WAL truncated' ? [...args, '--checkpoint-initial'] : args);
  if (state.startsWith('held')) keepWriter(writer);
  else await writer.stop(); // killed without closing: the WAL (and the -shm) stay
  if (state === 'wal, no shm') fs.rmSync(`${db}-shm`);
  return { dir, db };
}

describe('snapshotDb leaves the live files as it found them: bytes, modes, owners, mtimes, no new file', () => {
  const states: FileState[] = ['closed', 'wal, no shm', 'wal and shm', 'held by a writer', 'held, WAL truncated'];
  it.each(states)('%s', async (state) => {
    const { dir, db } = await databaseIn(state);
    const out = tmp();
    const before = listTree(dir);
    const result = await snapshotDb(db, path.join(out, 'snap.db'), { busyBudgetMs: 5000 }, inThread());
    expect(result.integrity).toBe('ok');
    expect(result.rows.steps).toBeGreaterThan(0);
    expect(changes(before, listTree(dir))).toEqual([]);
    expect(fs.readdirSync(out)).toEqual(['snap.db']); // the private copy went too
  });
});

describe('copyLiveDatabase', () => {
  it('copies the db and its WAL byte for byte, private, by the kernel and, without /proc, by reading', () => {
    const dir = tmp();
    const db = path.join(dir, 'live.db');
    const conn = new Database(db);
    conn.pragma('journal_mode = WAL');
    conn.pragma('wal_autocheckpoint = 0');
    conn.exec('CREATE TABLE steps (idx INTEGER PRIMARY KEY, data BLOB)');
    conn.prepare('INSERT INTO steps (data) VALUES (randomblob(3000000))').run();
    fs.chmodSync(db, 0o444); // the copy is still one agyctl can write
    const exists = fs.existsSync;
    for (const proc of [true, false]) {
      const spy = vi.spyOn(fs, 'existsSync').mockImplementation((p) => (p === '/proc/self/fd' ? proc : exists(p)));
      const into = path.join(dir, `copy-${proc}`);
      fs.mkdirSync(into, { mode: 0o700 });
      try {
        const copy = copyLiveDatabase(db, into);
        expect(copy, `proc ${proc}`).not.toBeNull();
        expect(spy).toHaveBeenCalledWith('/proc/self/fd');
        for (const suffix of ['', '-wal']) {
          expect(sha256File(`${copy}${suffix}`), `proc ${proc}${suffix}`).toBe(sha256File(`${db}${suffix}`));
          expect(fs.statSync(`${copy}${suffix}`).mode & 0o777).toBe(0o600);
        }
      } finally {
        spy.mockRestore();
      }
    }
    conn.close();
  });
});

describe('isOneState: a copy counts only when nothing could have torn it', () => {
  const header = (salt: number): Buffer => Buffer.alloc(32, salt);
  const id = (mtimeNs: string, inode = '7') => ({ inode, size: 4096, mtimeNs, mtime: '' });
  const look = (walHeader: Buffer | null, mtimeNs = '1', writing = false, inode = '7'): LiveLook => ({
    db: id(mtimeNs, inode),
    walHeader,
    writing,
  });

  it('the same WAL generation throughout: yes, even though a checkpoint wrote the db meanwhile', () => {
    expect(isOneState(look(header(1), '1'), header(1), look(header(1), '2'))).toBe(true);
  });
  it('the WAL started over before or after its copy: no', () => {
    expect(isOneState(look(header(1)), header(2), look(header(2)))).toBe(false);
    expect(isOneState(look(header(1)), header(1), look(header(2)))).toBe(false);
    expect(isOneState(look(header(1)), header(1), look(null))).toBe(false);
  });
  it('no WAL at first: only when the db stayed the same file, untouched', () => {
    expect(isOneState(look(null, '1'), null, look(null, '1'))).toBe(true);
    expect(isOneState(look(null, '1'), header(3), look(header(3), '1'))).toBe(true);
    expect(isOneState(look(null, '1'), null, look(null, '2'))).toBe(false);
    expect(isOneState(look(null, '1'), null, look(null, '1', false, '8'))).toBe(false);
  });
  it('a writer mid-commit (journal or exclusive lock) before or after: no', () => {
    expect(isOneState(look(header(1), '1', true), header(1), look(header(1)))).toBe(false);
    expect(isOneState(look(header(1)), header(1), look(header(1), '1', true))).toBe(false);
  });
});

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
    const result = await snapshotDb(db, path.join(out, 'snap.db'), { busyBudgetMs: 5000 }, inThread());
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
    for (let i = 0; i < 3; i += 1) await expectOneState(db, out, `snap${i}.db`, 200);
    expect(await writer.stop()).toBeGreaterThan(200);
  });

  it('copies only one state of the database while the writer checkpoints and starts its WAL over at every commit', async () => {
    const dir = tmp();
    const db = path.join(dir, 'live.db');
    const args = ['--initial-rows', '300', '--interval-ms', '3', '--blob-bytes', '8000', '--autocheckpoint', '1'];
    const writer = keepWriter(await startWriter(db, args));
    let accepted = 0;
    for (let i = 0; i < 100; i += 1) {
      const work = fs.mkdtempSync(path.join(dir, 'copy-'));
      const copy = copyLiveDatabase(db, work);
      if (copy !== null) {
        accepted += 1;
        expect(tornIn(copy)).toEqual([]);
      }
      fs.rmSync(work, { recursive: true });
    }
    expect(accepted).toBeGreaterThan(0);
    expect(await writer.stop()).toBeGreaterThan(300);
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
      await snapshotDb(db, path.join(out, 'x.db'), { busyBudgetMs: 600 }, inThread());
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
    const result = await snapshotDb(db, path.join(out, 'big.db'), { busyBudgetMs: 5000 }, run);
    await run.sync.flush();
    expect(result.bytes).toBeGreaterThan(8 * 1024 * 1024);
    expect(result.rows).toEqual({ steps: 160 });
    expect(result.integrity).toBe('ok');
    expect(result.sha256).toBe(sha256File(path.join(out, 'big.db')));
    expect(fs.statSync(path.join(out, 'big.db')).mode & 0o777).toBe(0o600);
  });

  it('keeps the checked copy as the snapshot, and compacts it only above the free-page threshold or when asked', async () => {
    const dir = tmp();
    /**
     * A WAL database with 100 rows of 4 KB, then `deleted` of them gone: as a live server leaves it (everything
     * still in its WAL: SQLite checkpoints the copy) or closed (no WAL: the copy's header makes it a snapshot).
     */
    const make = (name: string, deleted: number, held: boolean): string => {
      fs.mkdirSync(path.join(dir, `src-${name}`));
      const db = path.join(dir, `src-${name}`, name);
      const conn = new Database(db);
      conn.pragma('journal_mode = WAL');
      conn.pragma('wal_autocheckpoint = 0');
      conn.exec('CREATE TABLE steps (idx INTEGER PRIMARY KEY, data BLOB)');
      const insert = conn.prepare('INSERT INTO steps (data) VALUES (randomblob(4000))');
      conn.transaction(() => {
        for (let i = 0; i < 100; i += 1) insert.run();
      })();
      conn.prepare('DELETE FROM steps WHERE idx <= ?').run(deleted);
      if (!held) {
        conn.close();
        expect(fs.existsSync(`${db}-wal`)).toBe(false);
        return db;
      }
      fs.copyFileSync(db, `${db}.held`); // the file as a live server leaves it: everything in the WAL
      fs.copyFileSync(`${db}-wal`, `${db}.held-wal`);
      conn.close();
      fs.rmSync(db);
      fs.renameSync(`${db}.held`, db);
      fs.renameSync(`${db}.held-wal`, `${db}-wal`);
      fs.rmSync(`${db}-shm`, { force: true });
      return db;
    };
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const cases: Array<[string, number, boolean | undefined, boolean, number]> = [
      ['few-free.db', 10, undefined, false, 90],
      ['many-free.db', 40, undefined, true, 60],
      ['asked.db', 10, true, true, 90],
    ];
    for (const [base, deleted, compact, compacted, rows] of cases)
      for (const held of [true, false]) {
        const name = `${held ? 'held' : 'closed'}-${base}`;
        const db = make(name, deleted, held);
        const before = listTree(path.dirname(db));
        const result = await snapshotDb(db, path.join(out, name), { busyBudgetMs: 5000, compact }, inThread());
        expect(result, name).toMatchObject({ compacted, integrity: 'ok', rows: { steps: rows } });
        const snap = path.join(out, name);
        expect(changes(before, listTree(path.dirname(db)))).toEqual([]); // the source is only read
        expect([...fs.readFileSync(snap).subarray(18, 20)], name).toEqual([1, 1]); // rollback-journal mode
        expect(fs.readdirSync(out).filter((n) => n.startsWith(name) || n.startsWith(`.${name}`))).toEqual([name]);
        const conn = openReadOnly(snap, 0);
        try {
          const free = conn.pragma('freelist_count', { simple: true }) as number;
          expect(free === 0, name).toBe(compacted);
        } finally {
          conn.close();
        }
      }
  });

  it('never creates a database at a wrong path', async () => {
    const dir = tmp();
    const missing = path.join(dir, 'nope.db');
    await expect(snapshotDb(missing, path.join(dir, 'x.db'), { busyBudgetMs: 100 }, inThread())).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
