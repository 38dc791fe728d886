// bench/startup: median wall time of `agyctl --version` and `agyctl --help`
// against `node -e 0`, run alternately in one process so machine noise hits
// all three alike. Goal: <= 1.5x node's own start-up.
//
// Measured twice: with this shell's environment, and with a minimal one
// (PATH and HOME only). The difference matters: NODE_EXTRA_CA_CERTS, for
// example, makes every node start read a CA bundle (~40 ms here), which
// raises the baseline and flatters the ratio.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/agyctl.js', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 30);
const cases = { node: ['-e', '0'], version: [bin, '--version'], help: [bin, '--help'] };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function measure(label, env) {
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < runs; i += 1) {
    for (const [name, args] of Object.entries(cases)) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, args, { stdio: 'ignore', timeout: 10_000, env });
      if (r.status !== 0) throw new Error(`${name} exited ${r.status}`);
      times[name].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  const base = median(times.node);
  console.log(`${label}`);
  console.log(`  node -e 0:         ${base.toFixed(1)} ms`);
  for (const name of ['version', 'help']) {
    const m = median(times[name]);
    console.log(
      `  agyctl --${name.padEnd(8)} ${m.toFixed(1)} ms  ratio ${(m / base).toFixed(2)}x  (+${(m - base).toFixed(1)} ms; goal <= 1.50x)`,
    );
  }
}

console.log(`runs: ${runs} each`);
measure('this environment:', process.env);
measure('minimal environment (PATH, HOME):', { PATH: process.env.PATH, HOME: process.env.HOME });
