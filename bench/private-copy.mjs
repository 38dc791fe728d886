// bench/private-copy: what the private copy costs a snapshot. One database of
// BENCH_MB (257) in two shapes: everything still in the WAL (a writer killed
// without a checkpoint, as a server leaves it) and checkpointed (no WAL).
// For each, best of BENCH_ROUNDS (3), page cache warm:
//   - vacuum on the live files: VACUUM INTO from a read-only connection on the
//     database itself (what backup did before; it writes -wal/-shm beside it);
//   - private copy: copyLiveDatabase (db + WAL read into a private dir);
//   - copy + vacuum: the copy, then VACUUM INTO from a read-only connection on
//     the copy (SQLite rebuilds the WAL index from the copied WAL first).
// Prints numbers; asserts nothing.
//
//   npm run build && node bench/private-copy.mjs
//   env: BENCH_MB (257), BENCH_ROUNDS (3), BENCH_DIR (os tmpdir)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { copyLiveDatabase } = await import(path.join(ROOT, 'dist', 'backup', 'live-copy.js'));
const WRITER = path.join(ROOT, 'test', 'fixtures', 'wal-writer.mjs');
const MB_WANTED = Number(process.env.BENCH_MB ?? 257);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const base = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'agyctl-bench-copy-'));

function vacuum(source, dest) {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -256');
  db.prepare('VACUUM INTO ?').run(dest);
  db.close();
}

function best(fn) {
  let ms = Number.POSITIVE_INFINITY;
  for (let i = 0; i < ROUNDS; i += 1) {
    const work = fs.mkdtempSync(path.join(base, 'run-'));
    const t0 = performance.now();
    fn(work);
    ms = Math.min(ms, performance.now() - t0);
    fs.rmSync(work, { recursive: true });
  }
  return ms;
}

function measure(label, db) {
  const mb = (f) => (fs.existsSync(f) ? fs.statSync(f).size / 1024 / 1024 : 0);
  const live = best((work) => vacuum(db, path.join(work, 'snap.db')));
  for (const f of [`${db}-wal`, `${db}-shm`]) if (label === 'checkpointed') fs.rmSync(f, { force: true });
  const copy = best((work) => copyLiveDatabase(db, work));
  const both = best((work) => vacuum(copyLiveDatabase(db, work), path.join(work, 'snap.db')));
  console.log(
    `${label.padEnd(13)} db ${mb(db).toFixed(0)} MB, WAL ${mb(`${db}-wal`).toFixed(0)} MB: ` +
      `vacuum on the live files ${live.toFixed(0)} ms, private copy ${copy.toFixed(0)} ms, ` +
      `copy + vacuum ${both.toFixed(0)} ms (${(both / live).toFixed(2)}x)`,
  );
}

try {
  const db = path.join(base, 'live.db');
  const r = spawnSync(process.execPath, [WRITER, db, '--initial-mb', String(MB_WANTED), '--interval-ms', '600000'], {
    input: '', // stdin EOF: the writer stops at once, without a checkpoint
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`wal-writer failed: ${r.stderr}`);
  measure('all in WAL', db);
  const conn = new Database(db);
  conn.pragma('wal_checkpoint(TRUNCATE)');
  conn.close();
  measure('checkpointed', db);
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
