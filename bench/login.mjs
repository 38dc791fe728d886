// bench/login: how fast a captured sign-in URL reaches the user.
//  1. shim -> print: from the moment a browser shim writes the URL (seen by
//     this script through inotify on the shim log, like agyctl) to the
//     moment the URL line arrives on agyctl's stdout. Goal <= 50 ms.
//  2. start -> URL: total time from spawning agyctl to the URL line, minus
//     the simulator's configured start-up delay (AGY_SIM_STARTUP_MS).
// Median over BENCH_RUNS runs (default 15), simulator start-up delay 0.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'agyctl.js');
const runs = Number(process.env.BENCH_RUNS ?? 15);
const startupMs = Number(process.env.BENCH_SIM_STARTUP_MS ?? 0);

function once(tmp, home) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let shimWrite;
    let logWatcher;
    const dirWatcher = fs.watch(tmp, (_ev, name) => {
      if (!name?.startsWith('agyctl-login-') || logWatcher) return;
      const log = path.join(tmp, name, 'opened.log');
      try {
        logWatcher = fs.watch(log, () => {
          if (shimWrite === undefined && fs.statSync(log).size > 0) shimWrite = performance.now();
        });
      } catch {
        /* created a moment later; the next event retries */
      }
    });
    const env = {
      ...process.env,
      HOME: home,
      TMPDIR: tmp,
      AGYCTL_SERVER: `node ${path.join(root, 'scripts', 'agy-acp-sim')}`,
      AGY_SIM_STARTUP_MS: String(startupMs),
      NO_COLOR: '1',
    };
    const child = spawn(process.execPath, [bin, 'login', '--timeout', '20s'], {
      env,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const timer = setTimeout(() => child.kill('SIGINT'), 20_000);
    // The login's supervisor records the cancel in HOME; the sandbox goes only after agyctl has exited.
    const exited = new Promise((r) => child.once('exit', r));
    child.stdout.on('data', (chunk) => {
      if (!chunk.toString().includes('https://accounts.google.com/')) return;
      const printed = performance.now();
      child.kill('SIGINT');
      resolve({
        shimToPrint: shimWrite === undefined ? NaN : printed - shimWrite,
        startToUrl: printed - t0 - startupMs,
        exited,
      });
    });
    child.on('exit', () => {
      clearTimeout(timer);
      dirWatcher.close();
      logWatcher?.close();
      reject(new Error('agyctl exited before printing a URL'));
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const shim = [];
const total = [];
for (let i = 0; i < runs; i += 1) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-bench-login-'));
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home);
  try {
    const r = await once(tmp, home).catch((e) => e);
    if (r instanceof Error) throw r;
    if (!Number.isNaN(r.shimToPrint)) shim.push(r.shimToPrint);
    total.push(r.startToUrl);
    await r.exited;
  } finally {
    // agyctl removes its shim dir on Ctrl-C; give it its own deadline before we clean up.
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
console.log(`runs: ${runs} (simulator start-up delay ${startupMs} ms)`);
console.log(
  `shim wrote URL -> agyctl printed it: median ${median(shim).toFixed(1)} ms over ${shim.length} runs (goal <= 50 ms)`,
);
console.log(`agyctl start -> URL printed, minus simulator delay: median ${median(total).toFixed(1)} ms`);
