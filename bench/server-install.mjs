// bench/server-install: `agyctl server install` of a large fake build against
// `sha256sum` + `unzip` run one after the other (what a hand-made install does),
// and agyctl's peak RSS (GNU time's %M). Goals (issue 42): install <= 1.3x the
// pair, peak RSS <= 150 MB, no second full copy on disk (the archive and the
// unpacked tree only: agyctl unpacks in place in a staging dir and renames it).
//
// The archive is a zip made with Info-ZIP `zip -6` from a fake
// `agy_acp_server.par` of real bytes (each MiB: a random part and zeros, so it
// compresses about as the real 1.88 GB -> 682 MB build does) and a fake
// `localharness_external`. BENCH_UNPACKED_MB sets the .par's size (default
// 1900, as 1.1.1's; smaller on a slow machine: the size is printed).
// Needs zip, unzip, sha256sum and /usr/bin/time. Run after `npm run build`.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/agyctl.js', import.meta.url));
const parMb = Number(process.env.BENCH_UNPACKED_MB ?? 1900);
const harnessMb = Math.max(1, Math.round(parMb / 14));
const tmp = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'agyctl-bench-server-'));

function run(cmd, args, opts = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...opts });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, stderr: String(r.stderr) };
}

/** A file of `mb` MiB: each MiB 37% random bytes, the rest zeros (deflates to about 37%). */
function writeFake(file, mb) {
  const fd = fs.openSync(file, 'w', 0o755);
  const chunk = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < mb; i += 1) {
    crypto.randomFillSync(chunk, 0, 388_000);
    chunk.fill(0, 388_000);
    fs.writeSync(fd, chunk);
  }
  fs.closeSync(fd);
}

try {
  const src = path.join(tmp, 'src');
  fs.mkdirSync(src);
  writeFake(path.join(src, 'agy_acp_server.par'), parMb);
  writeFake(path.join(src, 'localharness_external'), harnessMb);
  const archive = path.join(tmp, 'antigravity-acp-1.0.0-linux-x86_64.zip');
  run('zip', [
    '-q',
    '-6',
    '-j',
    archive,
    path.join(src, 'agy_acp_server.par'),
    path.join(src, 'localharness_external'),
  ]);
  fs.rmSync(src, { recursive: true });
  const archiveMb = fs.statSync(archive).size / 2 ** 20;
  console.log(`archive: ${archiveMb.toFixed(0)} MiB zip, unpacking to ${parMb + harnessMb} MiB`);

  const sum = spawnSync('sha256sum', [archive], { encoding: 'utf8' }).stdout.slice(0, 64);
  // Warm the page cache alike for both sides.
  run('cat', [archive]);

  const out = path.join(tmp, 'unzip-out');
  const sha = run('sha256sum', [archive]);
  const unzip = run('unzip', ['-q', '-d', out, archive]);
  fs.rmSync(out, { recursive: true });
  const pair = sha.ms + unzip.ms;

  const prefix = path.join(tmp, 'prefix');
  const timed = run('/usr/bin/time', [
    '-f',
    '%M',
    process.execPath,
    bin,
    'server',
    'install',
    archive,
    '--sha256',
    sum,
    '--prefix',
    prefix,
    '--no-prove',
  ]);
  const rssMb = Number(timed.stderr.trim().split('\n').at(-1)) / 1024;

  console.log(`sha256sum:                ${(sha.ms / 1000).toFixed(2)} s`);
  console.log(`unzip:                    ${(unzip.ms / 1000).toFixed(2)} s`);
  console.log(`sha256sum + unzip:        ${(pair / 1000).toFixed(2)} s`);
  console.log(
    `agyctl server install:    ${(timed.ms / 1000).toFixed(2)} s  (${(timed.ms / pair).toFixed(2)}x; goal <= 1.3x)`,
  );
  console.log(`agyctl peak RSS:          ${rssMb.toFixed(0)} MB (goal <= 150 MB)`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
