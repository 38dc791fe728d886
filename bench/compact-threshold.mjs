// bench/compact-threshold: what compacting a snapshot (VACUUM INTO after the
// checked copy) costs and gives back, by share of free pages, on a database of
// BENCH_MB (64) MB with 2-32 KB rows: the snapshot path in this thread
// (snapshotDb, the pool in-thread), copy only against copy + VACUUM INTO, best
// of BENCH_ROUNDS (3): time, bytes written (/proc/self/io) and the snapshot's
// size. The threshold in src/backup/snapshot-work.ts (COMPACT_FREE_RATIO)
// comes from these figures (docs/backup.md, Speed). Prints numbers; asserts nothing.
//
//   npm run build && node bench/compact-threshold.mjs
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { snapshotDb } = await import(path.join(ROOT, 'dist', 'backup', 'backup-session.js'));
const { WorkerPool } = await import(path.join(ROOT, 'dist', 'backup', 'worker-pool.js'));
const { SyncBatch } = await import(path.join(ROOT, 'dist', 'backup', 'snapshot-files.js'));
const MB = 1024 * 1024;
const SIZE_MB = Number(process.env.BENCH_MB ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const written = () => Number(/^write_bytes: (\d+)$/m.exec(fs.readFileSync('/proc/self/io', 'utf8'))[1]);

function makeDb(file, freeShare) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE steps (idx INTEGER PRIMARY KEY, data BLOB)');
  const ins = db.prepare('INSERT INTO steps VALUES (?, ?)');
  let bytes = 0;
  let i = 0;
  db.transaction(() => {
    for (; bytes < SIZE_MB * MB; i += 1) {
      const n = 2048 + crypto.randomInt(30 * 1024);
      ins.run(i, crypto.randomBytes(n));
      bytes += n;
    }
  })();
  db.prepare('DELETE FROM steps WHERE idx % 100 < ?').run(Math.round(freeShare * 100));
  const share = db.pragma('freelist_count', { simple: true }) / db.pragma('page_count', { simple: true });
  db.close();
  return share;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-bench-compact-'));
try {
  console.log(`bench/compact-threshold  ${SIZE_MB} MB database, best of ${ROUNDS}`);
  for (const free of [0, 0.1, 0.25, 0.4, 0.6]) {
    const src = path.join(root, 'src');
    fs.mkdirSync(src);
    const db = path.join(src, 'a.db');
    const share = makeDb(db, free);
    const line = [];
    for (const compact of [false, true]) {
      let best = { ms: Infinity };
      for (let r = 0; r < ROUNDS; r += 1) {
        const out = path.join(root, 'out');
        fs.mkdirSync(out, { mode: 0o700 });
        const run = { pool: new WorkerPool(2, { inThread: true }), sync: new SyncBatch() };
        const w0 = written();
        const t0 = performance.now();
        const res = await snapshotDb(db, path.join(out, 'a.db'), { busyBudgetMs: 10_000, compact }, run);
        await run.sync.flush();
        const ms = performance.now() - t0;
        const w = written() - w0;
        await run.pool.close();
        if (ms < best.ms) best = { ms, w, bytes: res.bytes, compacted: res.compacted };
        fs.rmSync(out, { recursive: true, force: true });
      }
      line.push(
        `${compact ? '--compact' : 'default  '} ${best.compacted ? '(compacted)' : '(copy)     '} ${best.ms.toFixed(0).padStart(5)} ms, wrote ${(best.w / MB).toFixed(0).padStart(4)} MB, snapshot ${(best.bytes / MB).toFixed(0).padStart(4)} MB`,
      );
    }
    console.log(`free pages ${(share * 100).toFixed(0).padStart(2)}%:  ${line.join('   |   ')}`);
    fs.rmSync(src, { recursive: true, force: true });
  }
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
