// bench/hostile-lines: agyctl's peak RSS while a server writes one enormous
// stdout line without a newline (AGY_SIM_RAW_LINE_BYTES, default 200 MB).
// Goal: under 150 MB whatever the line's size (before the bound: 669 MB).
// Polls VmHWM (the kernel's peak RSS) of the agyctl process in /proc until
// it exits. Needs `npm run build`; Linux only.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/agyctl.js', import.meta.url));
const sim = fileURLToPath(new URL('../scripts/agy-acp-sim', import.meta.url));
const sizes = (process.env.BENCH_LINE_MB ?? '0,20,200').split(',').map(Number);

function peakKb(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

async function run(mb) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-bench-lines-'));
  const home = path.join(root, 'home');
  fs.mkdirSync(home);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: root,
    NO_COLOR: '1',
    AGYCTL_SERVER: `${process.execPath} ${sim}`,
    AGY_SIM_RAW_LINE_BYTES: String(mb * 1024 * 1024),
  };
  const t0 = Date.now();
  const child = spawn(process.execPath, [bin, 'probe', '--timeout', '60s'], { env, cwd: root, stdio: 'ignore' });
  let peak = 0;
  const poll = setInterval(() => (peak = Math.max(peak, peakKb(child.pid))), 10);
  const code = await new Promise((resolve) => child.on('exit', resolve));
  clearInterval(poll);
  fs.rmSync(root, { recursive: true, force: true });
  return { mb, code, ms: Date.now() - t0, peakMb: Math.round(peak / 1024) };
}

for (const mb of sizes) {
  const r = await run(mb);
  console.log(
    `line ${String(r.mb).padStart(4)} MB: agyctl peak RSS ${String(r.peakMb).padStart(4)} MB, exit ${r.code}, ${r.ms} ms`,
  );
}
