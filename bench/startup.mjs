// bench/startup: median wall time of `agyctl --version` and `agyctl --help`
// against `node -e 0`, run alternately in one process so machine noise hits
// all three alike. Goal: <= 1.5x node's own start-up.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/agyctl.js', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 30);
const cases = { node: ['-e', '0'], version: [bin, '--version'], help: [bin, '--help'] };
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));

for (let i = 0; i < runs; i += 1) {
  for (const [name, args] of Object.entries(cases)) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { stdio: 'ignore', timeout: 10_000 });
    if (r.status !== 0) throw new Error(`${name} exited ${r.status}`);
    times[name].push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times.node);
console.log(`runs: ${runs}`);
console.log(`node -e 0:          ${base.toFixed(1)} ms`);
for (const name of ['version', 'help']) {
  const m = median(times[name]);
  console.log(`agyctl --${name.padEnd(8)} ${m.toFixed(1)} ms  ratio ${(m / base).toFixed(2)}x  (goal <= 1.50x)`);
}
