// bench/unit-suite: wall time of the unit project (`vitest run --project unit`),
// with vitest's own split (transform, import, tests), for the current config and
// for variants given as extra vitest flags. Runs alternate, so machine noise hits
// every variant alike; prints medians. Goal: <= 20 s on 2 cores. The CPU time
// (user+sys of vitest and every child, from /usr/bin/time when installed) moves
// less with other load on the machine than the wall time does.
//
//   node bench/unit-suite.mjs                            # the config as committed
//   node bench/unit-suite.mjs '' '--no-isolate'          # A/B: committed vs. one flag set
//   node bench/unit-suite.mjs '' '--config=other.ts'     # A/B: another config file
// BENCH_RUNS (default 3) sets the rounds.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 3);
const variants = process.argv.length > 2 ? process.argv.slice(2) : [''];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (s) => (s.endsWith('ms') ? Number.parseFloat(s) / 1000 : Number.parseFloat(s));
// biome-ignore lint/suspicious/noControlCharactersInRegex: strips the ANSI colours vitest prints
const plain = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
const timeBin = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const cpuFile = path.join(os.tmpdir(), `unit-suite-cpu-${process.pid}`);

function once(flags) {
  const args = [vitest, 'run', '--project', 'unit', ...flags.split(' ').filter(Boolean)];
  const [cmd, cmdArgs] = timeBin
    ? [timeBin, ['-f', '%U %S', '-o', cpuFile, process.execPath, ...args]]
    : [process.execPath, args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, cmdArgs, { cwd: root, encoding: 'utf8', env: { ...process.env, CI: '1' } });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = timeBin
    ? fs
        .readFileSync(cpuFile, 'utf8')
        .trim()
        .split(/\s+/)
        .reduce((a, b) => a + Number(b), 0)
    : Number.NaN;
  const out = plain(`${r.stdout}${r.stderr}`);
  if (r.status !== 0) throw new Error(`vitest ${flags} exited ${r.status}:\n${out.slice(-3000)}`);
  const split = {};
  const line = /Duration\s+\S+\s+\(([^)]*)\)/.exec(out)?.[1] ?? '';
  for (const m of line.matchAll(/(\w+) ([\d.]+m?s)/g)) split[m[1]] = seconds(m[2]);
  process.stderr.write(`${flags || '(committed config)'}: ${wall.toFixed(1)}s wall, ${cpu.toFixed(1)}s cpu\n`);
  return { wall, cpu, ...split };
}

const results = Object.fromEntries(variants.map((v) => [v, []]));
for (let i = 0; i < runs; i += 1) for (const v of variants) results[v].push(once(v));
fs.rmSync(cpuFile, { force: true });

for (const v of variants) {
  const rs = results[v];
  const keys = ['wall', 'cpu', 'transform', 'import', 'tests'];
  const cols = keys.map((k) => `${k} ${median(rs.map((r) => r[k] ?? Number.NaN)).toFixed(1)}s`);
  console.log(
    `${v || '(committed config)'}: ${cols.join(', ')}  [walls: ${rs.map((r) => r.wall.toFixed(1)).join(' ')}]`,
  );
}
