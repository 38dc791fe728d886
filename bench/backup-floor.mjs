// bench/backup-floor: the least work a backup that keeps agyctl's promise must
// do, with nothing else: each database (closed: no WAL) copied by the kernel
// (copy_file_range) and made rollback-journal by its header,
// then integrity_check + row counts and sha256 of the copy on worker threads
// (one per core; a single database is checked and hashed on two at once),
// then one `sync`. No live-copy checks, no manifest, no .meta, no
// retention, no locks: a floor to read agyctl's time against, not a backup.
// Run by bench/backup.mjs's compare part (a row "floor: copy + check + sha256");
// by hand: node bench/backup-floor.mjs SOURCE_DIR OUT_DIR. Prints nothing.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

const CHUNK = 1 << 20;

function check(file) {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('mmap_size = 16777216');
    db.pragma('integrity_check');
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    for (const { name } of tables) db.prepare(`SELECT count(*) FROM "${name}"`).get();
  } finally {
    db.close();
  }
}

function hash(file) {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(CHUNK);
  for (let n = fs.readSync(fd, buf, 0, CHUNK, null); n > 0; n = fs.readSync(fd, buf, 0, CHUNK, null))
    h.update(buf.subarray(0, n));
  fs.closeSync(fd);
  return h.digest('hex');
}

/** A closed WAL database copied, and made rollback-journal by its header as agyctl's snapshots are (no -wal/-shm on open). */
function copy(from, to) {
  fs.copyFileSync(from, to);
  const fd = fs.openSync(to, 'r+');
  fs.writeSync(fd, Buffer.from([1, 1]), 0, 2, 18);
  fs.closeSync(fd);
  return to;
}

if (!isMainThread) {
  parentPort.on('message', ({ kind, file, from }) => {
    if (kind === 'check') check(file);
    else if (kind === 'hash') hash(file);
    else {
      copy(from, file);
      check(file);
      hash(file);
    }
    parentPort.postMessage('done');
  });
} else {
  const [src, out] = process.argv.slice(2);
  const workers = Array.from({ length: Math.max(2, os.availableParallelism()) }, () => {
    const w = new Worker(new URL(import.meta.url));
    w.unref();
    return w;
  });
  const run = (w, kind, file, from) =>
    new Promise((resolve) => {
      w.once('message', resolve);
      w.postMessage({ kind, file, from });
    });
  fs.mkdirSync(out, { recursive: true });
  const dbs = fs.readdirSync(src).filter((f) => f.endsWith('.db'));
  if (dbs.length === 1) {
    const file = copy(path.join(src, dbs[0]), path.join(out, dbs[0]));
    await Promise.all([run(workers[0], 'check', file), run(workers[1], 'hash', file)]);
  } else {
    const queue = [...dbs];
    await Promise.all(
      workers.map(async (w) => {
        for (let f = queue.shift(); f !== undefined; f = queue.shift())
          await run(w, 'all', path.join(out, f), path.join(src, f));
      }),
    );
  }
  // One flush of everything, as `cp -r` + `sync` is timed.
  spawnSync('sync');
}
