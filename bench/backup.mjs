// bench/backup, three parts in one run:
// 1. compare: `agyctl backup` against what a sysadmin would write instead, on
//    two workloads (one 257 MB session; 200 sessions, ~690 MB; WAL databases
//    with a steps table and an index, 2-32 KB blobs): `cp -r` + `sync`, the
//    shell loops `sqlite3 "$f" "VACUUM INTO ..."` and `sqlite3 "$f" ".backup ..."`
//    (skipped, saying so, when the sqlite3 CLI is not installed), the VACUUM
//    INTO loop that also runs integrity_check and sha256sum on each copy (what
//    agyctl does besides the copy), and agyctl;
//    best of BENCH_ROUNDS, page cache warm. Goals: agyctl <= 1.0x the VACUUM
//    INTO loop on the big session, <= 0.7x on many sessions.
// 2. live: `agyctl backup` of a large database while a separate writer
//    process commits ~10 rows/s with tens-of-KB blobs: peak RSS (goal <= 150 MB)
//    and the writer's worst commit during the snapshot (goal <= 100 ms).
// 3. reuse: 1,000 unchanged sessions backed up again (goal < 2 s).
// 4. root (as root only): root backing up a user's state dir of 200 unchanged
//    sessions, the second run timed (goal <= 2 s).
// compare also times bench/backup-floor.mjs (copy, check, hash and sync
// with none of agyctl's safety: the least its promise costs), and prints,
// per agyctl run: its time over `cp -r` + `sync`
// (goals: <= 1.6x one big session, <= 1.3x 200 sessions), the bytes it wrote
// (/proc write_bytes of the whole process, workers included; and less
// cancelled_write_bytes: written then truncated before it reached the disk)
// per backed-up session over that session's db + WAL size (goal <= 1.1x), and
// its peak RSS (goal <= 110 MB). BENCH_BEFORE=<checkout>/bin/agyctl.js runs
// another build beside this one in the same run (before -> after);
// BENCH_EXE=release/agyctl-<v>-linux-x64 the single executable too.
// Prints numbers; asserts nothing.
//
//   npm run build && node bench/backup.mjs
//   env: BENCH_ONLY (compare,live,reuse,root), BENCH_BEFORE (another bin/agyctl.js), BENCH_EXE (the executable), BENCH_DB_MB (1024, live part), BENCH_SESSIONS (1000),
//        BENCH_BIG_MB (257), BENCH_MANY (200), BENCH_MANY_MB (690), BENCH_JOBS (agyctl --jobs),
//        BENCH_DIR (os tmpdir), BENCH_ROUNDS (3), BENCH_WRITER_SYNC (FULL | NORMAL; default: better-sqlite3's FULL)
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'agyctl.js');
const WRITER = path.join(ROOT, 'test', 'fixtures', 'wal-writer.mjs');
const FLOOR = path.join(ROOT, 'bench', 'backup-floor.mjs');
const DB_MB = Number(process.env.BENCH_DB_MB ?? 1024);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const BASE = process.env.BENCH_DIR ?? os.tmpdir();
const MB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const uuid = () => crypto.randomUUID();

function sandbox(name) {
  const root = fs.mkdtempSync(path.join(BASE, `agyctl-bench-${name}-`));
  const home = path.join(root, 'home');
  const conv = path.join(home, '.gemini', 'antigravity-acp', 'conversations');
  fs.mkdirSync(conv, { recursive: true });
  return { root, home, conv, backups: path.join(root, 'backups') };
}

const BEFORE = process.env.BENCH_BEFORE;
/** The single executable (release/agyctl-<v>-linux-x64, what the .deb installs), run beside the checkout's build. */
const EXE = process.env.BENCH_EXE;

/** This process's I/O counters; a child's are added to them when it is reaped (spawnSync waits for it). */
function ioNow() {
  const text = fs.readFileSync('/proc/self/io', 'utf8');
  const field = (name) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { write: field('write_bytes'), cancelled: field('cancelled_write_bytes') };
}

/** Run agyctl (`bin`, default this checkout's) under /usr/bin/time for its peak RSS, and count what it wrote. */
function agyctl(sb, args, bin = BIN) {
  const env = { PATH: process.env.PATH, HOME: sb.home, NO_COLOR: '1' };
  const useTime = fs.existsSync('/usr/bin/time');
  // A .js entry runs under this Node; anything else is the single executable, run as it is.
  const command = bin.endsWith('.js') ? [process.execPath, bin] : [bin];
  const cmd = useTime ? '/usr/bin/time' : command[0];
  const argv = useTime ? ['-f', 'MAXRSS_KB %M', ...command, ...args] : [...command.slice(1), ...args];
  const io0 = ioNow();
  const t0 = performance.now();
  const r = spawnSync(cmd, argv, { env, encoding: 'utf8', maxBuffer: 64 * MB });
  const ms = performance.now() - t0;
  const io1 = ioNow();
  const rss = /MAXRSS_KB (\d+)/.exec(r.stderr ?? '');
  if (r.status !== 0 && r.status !== 6) throw new Error(`agyctl ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return {
    ms,
    rssMb: rss ? Number(rss[1]) / 1024 : NaN,
    written: io1.write - io0.write,
    cancelled: io1.cancelled - io0.cancelled,
    json: JSON.parse(r.stdout),
    t0: Date.now() - ms,
    t1: Date.now(),
  };
}

function cpTime(src, dst, fsync) {
  fs.rmSync(dst, { force: true });
  const t0 = performance.now();
  const r = spawnSync('cp', [src, dst]);
  if (r.status !== 0) throw new Error('cp failed');
  if (fsync) {
    const fd = fs.openSync(dst, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  }
  const ms = performance.now() - t0;
  fs.rmSync(dst, { force: true });
  return ms;
}

async function startWriter(db) {
  const args = [
    WRITER,
    db,
    '--initial-mb',
    String(DB_MB),
    '--checkpoint-initial',
    '--blob-bytes',
    '30000',
    '--interval-ms',
    '100',
    '--log-commits',
  ];
  if (process.env.BENCH_WRITER_SYNC) args.push('--synchronous', process.env.BENCH_WRITER_SYNC);
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const commits = [];
  let buf = '';
  let ready = false;
  child.stdout.setEncoding('utf8').on('data', (c) => {
    buf += c;
    const lines = buf.split('\n');
    buf = lines.pop();
    for (const l of lines) {
      if (l.startsWith('ready')) ready = true;
      const m = /^commit (\d+) (\d+) ([\d.]+)$/.exec(l);
      if (m) commits.push({ at: Number(m[2]), ms: Number(m[3]) });
    }
  });
  const deadline = Date.now() + 30 * 60_000;
  while (!ready) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('writer did not become ready');
    await sleep(100);
  }
  return { child, commits, stop: () => child.kill('SIGTERM') };
}

async function liveBench() {
  const sb = sandbox('live');
  const id = uuid();
  const db = path.join(sb.conv, `${id}.db`);
  fs.writeFileSync(path.join(sb.conv, `${id}.meta`), JSON.stringify({ cwd: '/bench' }));
  console.log(`building a ${DB_MB} MB conversation database ...`);
  const writer = await startWriter(db);
  try {
    await sleep(3000); // let the writer reach its steady ~10 commits/s
    const size = fs.statSync(db).size + (fs.existsSync(`${db}-wal`) ? fs.statSync(`${db}-wal`).size : 0);
    // Alternate cp and agyctl, each after a sync so neither pays for the other's dirty pages; report medians.
    const cps = [];
    const cpSyncs = [];
    const runs = [];
    // Each measurement starts the same way (previous output removed, sync, a pause for writeback to
    // settle), and cp and agyctl alternate, so neither pays for the other's dirty pages.
    const settle = async () => {
      fs.rmSync(path.join(sb.root, 'cp.db'), { force: true });
      fs.rmSync(sb.backups, { recursive: true, force: true });
      spawnSync('sync');
      await sleep(1000);
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      await settle();
      cps.push(cpTime(db, path.join(sb.root, 'cp.db'), false));
      await settle();
      runs.push(agyctl(sb, ['backup', '--to', sb.backups, '--json']));
      await sleep(300); // commits queued behind the snapshot get logged
      await settle();
      cpSyncs.push(cpTime(db, path.join(sb.root, 'cp.db'), true));
    }
    const cpMs = median(cps);
    const cpSyncMs = median(cpSyncs);
    const run = runs.slice().sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];
    const snapBytes = run.json.sessions[0].bytes;
    const during = runs.flatMap((r) => writer.commits.filter((c) => c.at >= r.t0 && c.at <= r.t1 + 200));
    const worst = Math.max(0, ...during.map((c) => c.ms));
    // Longest time between two commits while a snapshot ran (a stall shows here even outside the commit itself).
    const longestGap = Math.max(
      0,
      ...runs.map((r) => {
        const at = writer.commits.filter((c) => c.at >= r.t0 - 150 && c.at <= r.t1 + 200).map((c) => c.at);
        return Math.max(0, ...at.slice(1).map((t, i) => t - at[i]));
      }),
    );
    const mbps = (bytes, ms) => (bytes / MB / (ms / 1000)).toFixed(0);
    console.log(
      `database: ${(size / MB).toFixed(0)} MB (db + WAL); snapshot ${(snapBytes / MB).toFixed(0)} MB; ${ROUNDS} rounds, medians`,
    );
    console.log(
      `cp:            ${cpMs.toFixed(0)} ms  (${mbps(size, cpMs)} MB/s)   runs: ${cps.map((x) => x.toFixed(0)).join(', ')}`,
    );
    console.log(
      `cp + fsync:    ${cpSyncMs.toFixed(0)} ms  (${mbps(size, cpSyncMs)} MB/s)   runs: ${cpSyncs.map((x) => x.toFixed(0)).join(', ')}`,
    );
    console.log(
      `agyctl backup: ${run.ms.toFixed(0)} ms  (${mbps(snapBytes, run.ms)} MB/s, whole process incl. start-up and fsync)   runs: ${runs.map((r) => r.ms.toFixed(0)).join(', ')}`,
    );
    console.log(
      `throughput ratio agyctl/cp: ${(snapBytes / run.ms / (size / cpMs)).toFixed(2)}x; agyctl/(cp + fsync): ${(snapBytes / run.ms / (size / cpSyncMs)).toFixed(2)}x`,
    );
    console.log(`agyctl peak RSS: ${Math.max(...runs.map((r) => r.rssMb)).toFixed(0)} MB  (goal <= 150 MB)`);
    console.log(
      `writer during the snapshots: ${during.length} commits, worst commit ${worst.toFixed(1)} ms, longest gap between commits ${longestGap} ms (interval 100 ms)  (goal: worst commit <= 100 ms)`,
    );
  } finally {
    writer.stop();
    await sleep(200);
    fs.rmSync(sb.root, { recursive: true, force: true });
  }
}

/** A conversation-like WAL database of about `mb` MB: steps with 2-32 KB random blobs and an index, gen_metadata rows. */
function makeSession(file, mb) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.exec(
    'CREATE TABLE steps (idx integer PRIMARY KEY, step_type integer NOT NULL DEFAULT 0, step_payload blob); CREATE INDEX steps_by_type ON steps (step_type, idx); CREATE TABLE gen_metadata (idx integer PRIMARY KEY, data blob, size integer NOT NULL DEFAULT 0)',
  );
  const step = db.prepare('INSERT INTO steps VALUES (?, ?, ?)');
  const gen = db.prepare('INSERT INTO gen_metadata VALUES (?, ?, ?)');
  const target = mb * MB;
  let bytes = 0;
  for (let i = 0; bytes < target; ) {
    db.transaction(() => {
      for (let k = 0; k < 50 && bytes < target; k += 1, i += 1) {
        const n = 2048 + crypto.randomInt(30 * 1024);
        step.run(i, i % 7, crypto.randomBytes(n));
        gen.run(i, crypto.randomBytes(64), 64);
        bytes += n + 80;
      }
    })();
  }
  db.close();
}

function buildWorkload(name, count, mbEach) {
  const sb = sandbox(name);
  for (let i = 0; i < count; i += 1) {
    const id = uuid();
    makeSession(path.join(sb.conv, `${id}.db`), mbEach);
    fs.writeFileSync(path.join(sb.conv, `${id}.meta`), JSON.stringify({ cwd: `/p/${i}` }));
  }
  return sb;
}

function dirBytes(dir) {
  return fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
}

/** Wall time of a shell command (spawn included, as a sysadmin would run it). */
function shellMs(script, cwd) {
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', script], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${script} failed: ${r.stderr}`);
  return performance.now() - t0;
}

function hasSqlite3() {
  return spawnSync('sqlite3', ['-version'], { encoding: 'utf8' }).status === 0;
}

/** Best of ROUNDS; the output is removed and the disk synced before each round, so no run pays for another's dirty pages. */
function best(sb, fn) {
  const times = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    fs.rmSync(sb.out, { recursive: true, force: true });
    fs.mkdirSync(sb.out);
    spawnSync('sync');
    times.push(fn());
  }
  fs.rmSync(sb.out, { recursive: true, force: true });
  return Math.min(...times);
}

function compareOne(label, count, mbEach) {
  console.log(`building ${label} ...`);
  const sb = buildWorkload(label.replace(/\W+/g, '-'), count, mbEach);
  sb.out = path.join(sb.root, 'out');
  try {
    const size = dirBytes(sb.conv);
    const q = (p) => `'${p.replaceAll("'", "'\\''")}'`;
    const rows = [];
    rows.push([
      'cp -r + sync',
      best(sb, () => shellMs(`cp -r ${q(sb.conv)} ${q(path.join(sb.out, 'c'))} && sync`, sb.root)),
    ]);
    // The least the promise costs (copy, check, hash, sync) with none of agyctl's safety: bench/backup-floor.mjs.
    rows.push([
      'floor: copy+check+sha256',
      best(sb, () => shellMs(`${q(process.execPath)} ${q(FLOOR)} ${q(sb.conv)} ${q(path.join(sb.out, 'f'))}`, sb.root)),
    ]);
    if (hasSqlite3()) {
      rows.push([
        'sqlite3 VACUUM INTO loop',
        best(sb, () => shellMs(`for f in *.db; do sqlite3 "$f" "VACUUM INTO '${sb.out}/$f'"; done`, sb.conv)),
      ]);
      rows.push([
        'sqlite3 .backup loop',
        best(sb, () => shellMs(`for f in *.db; do sqlite3 "$f" ".backup '${sb.out}/$f'"; done`, sb.conv)),
      ]);
      // The same loop doing what agyctl does besides the copy: check it, hash it (the fair comparison).
      rows.push([
        'loop + check + sha256sum',
        best(sb, () =>
          shellMs(
            `for f in *.db; do sqlite3 "$f" "VACUUM INTO '${sb.out}/$f'" && sqlite3 "${sb.out}/$f" "PRAGMA integrity_check" >/dev/null && sha256sum "${sb.out}/$f" >/dev/null; done`,
            sb.conv,
          ),
        ),
      ]);
    } else {
      console.log('  sqlite3 CLI not installed: the shell loops were skipped (apt-get install sqlite3 to compare)');
    }
    const jobs = process.env.BENCH_JOBS ? ['--jobs', process.env.BENCH_JOBS] : [];
    const runs = {};
    const builds = [
      ...(BEFORE ? [['agyctl before', BEFORE]] : []),
      ['agyctl backup', BIN],
      ...(EXE ? [['agyctl executable', EXE]] : []),
    ];
    for (const [name, bin] of builds) {
      const seen = { rss: 0, written: [], cancelled: [] };
      rows.push([
        name,
        best(sb, () => {
          const r = agyctl(sb, ['backup', '--to', path.join(sb.out, 'b'), '--json', ...jobs], bin);
          seen.rss = Math.max(seen.rss, r.rssMb);
          seen.written.push(r.written);
          seen.cancelled.push(r.cancelled);
          return r.ms;
        }),
      ]);
      runs[name] = seen;
    }
    const ms = Object.fromEntries(rows);
    const agy = ms['agyctl backup'];
    console.log(`${label}: ${count} session(s), ${(size / MB).toFixed(0)} MB; best of ${ROUNDS}`);
    for (const [name, t] of rows)
      console.log(`  ${name.padEnd(26)} ${(t / 1000).toFixed(2)} s   agyctl / this: ${(agy / t).toFixed(2)}x`);
    const loop = ms['sqlite3 VACUUM INTO loop'];
    const goal = count === 1 ? 1.6 : 1.3;
    for (const [name] of builds) {
      const seen = runs[name];
      const perSession = median(seen.written) / count;
      const kept = median(seen.written.map((w, i) => w - seen.cancelled[i])) / count;
      const loopText = loop
        ? `; / VACUUM INTO loop ${(ms[name] / loop).toFixed(2)}x; / (loop + check + sha256sum) ${(ms[name] / ms['loop + check + sha256sum']).toFixed(2)}x`
        : '';
      console.log(
        `  ${name}: / (cp -r + sync) ${(ms[name] / ms['cp -r + sync']).toFixed(2)}x (goal <= ${goal.toFixed(1)}x); / floor ${(ms[name] / ms['floor: copy+check+sha256']).toFixed(2)}x (floor / (cp -r + sync) ${(ms['floor: copy+check+sha256'] / ms['cp -r + sync']).toFixed(2)}x)${loopText}; written per session ${(perSession / MB).toFixed(2)} MB = ${(perSession / (size / count)).toFixed(2)}x its db + WAL (goal <= 1.1x), ${(kept / (size / count)).toFixed(2)}x less cancelled; peak RSS ${seen.rss.toFixed(0)} MB (goal <= 110 MB)`,
      );
    }
  } finally {
    fs.rmSync(sb.root, { recursive: true, force: true });
  }
}

function compareBench() {
  compareOne('one big session', 1, Number(process.env.BENCH_BIG_MB ?? 257));
  const many = Number(process.env.BENCH_MANY ?? 200);
  compareOne('many sessions', many, Number(process.env.BENCH_MANY_MB ?? 690) / many);
}

function makeIdleSessions(sb, n) {
  const old = new Date(Date.now() - 3_600_000);
  for (let i = 0; i < n; i += 1) {
    const id = uuid();
    const file = path.join(sb.conv, `${id}.db`);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(
      'CREATE TABLE steps (idx integer PRIMARY KEY, step_payload blob); CREATE TABLE gen_metadata (idx integer PRIMARY KEY, data blob)',
    );
    const ins = db.prepare('INSERT INTO steps VALUES (?, ?)');
    db.transaction(() => {
      for (let r = 0; r < 8; r += 1) ins.run(r, crypto.randomBytes(2000));
    })();
    db.close();
    fs.writeFileSync(path.join(sb.conv, `${id}.meta`), JSON.stringify({ cwd: `/p/${i}` }));
    for (const f of [file, `${file}-wal`]) if (fs.existsSync(f)) fs.utimesSync(f, old, old);
  }
}

function reuseBench() {
  const sb = sandbox('reuse');
  try {
    makeIdleSessions(sb, SESSIONS);
    const first = agyctl(sb, ['backup', '--to', sb.backups, '--json']);
    const second = agyctl(sb, ['backup', '--to', sb.backups, '--json']);
    const reused = second.json.sessions.filter((s) => s.status === 'reused').length;
    console.log(
      `${SESSIONS} idle sessions: first backup ${first.ms.toFixed(0)} ms; second backup ${second.ms.toFixed(0)} ms with ${reused} reused  (goal < 2000 ms); peak RSS ${second.rssMb.toFixed(0)} MB`,
    );
  } finally {
    fs.rmSync(sb.root, { recursive: true, force: true });
  }
}

/** Root backing up a user's state dir of 200 unchanged sessions: the second run, which could reuse them all. */
function rootBench() {
  if (process.getuid?.() !== 0) {
    console.log('root part skipped: it needs root (it creates a user and backs up their state dir as root)');
    return;
  }
  const n = Number(process.env.BENCH_ROOT_SESSIONS ?? 200);
  const sb = sandbox('root');
  fs.chmodSync(sb.root, 0o755);
  const name = `agyb${crypto.randomBytes(3).toString('hex')}`;
  spawnSync('useradd', ['--no-create-home', '--home-dir', sb.home, '--shell', '/usr/sbin/nologin', name]);
  try {
    const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
    makeIdleSessions(sb, n);
    const own = (p) => {
      fs.lchownSync(p, uid, gid);
      if (fs.lstatSync(p).isDirectory()) for (const f of fs.readdirSync(p)) own(path.join(p, f));
    };
    own(sb.home);
    for (const [label, bin] of [...(BEFORE ? [['before', BEFORE]] : []), ['after', BIN]]) {
      const to = path.join(sb.root, `backups-${label}`);
      const first = agyctl(sb, ['backup', '--to', to, '--json'], bin);
      const second = agyctl(sb, ['backup', '--to', to, '--json'], bin);
      const reused = second.json.sessions.filter((s) => s.status === 'reused').length;
      console.log(
        `root on a user's state dir, ${n} unchanged sessions (${label}): first ${first.ms.toFixed(0)} ms; second ${second.ms.toFixed(0)} ms with ${reused} reused (goal <= 2000 ms); written ${(second.written / MB).toFixed(1)} MB; peak RSS ${second.rssMb.toFixed(0)} MB`,
      );
    }
  } finally {
    spawnSync('userdel', [name]);
    fs.rmSync(sb.root, { recursive: true, force: true });
  }
}

const ONLY = new Set((process.env.BENCH_ONLY ?? 'compare,live,reuse,root').split(','));
console.log(`bench/backup  node ${process.version}  ${os.cpus().length} cpus  dir ${BASE}`);
if (ONLY.has('compare')) compareBench();
if (ONLY.has('live')) await liveBench();
if (ONLY.has('reuse')) reuseBench();
if (ONLY.has('root')) rootBench();
