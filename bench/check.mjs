// bench/check: what `agyctl check` costs on top of what it must do.
//  1. static `check` wall time against `node -e 0` (goal <= 2x);
//  2. `check --live` wall time minus the simulator's own spawn + initialize +
//     session/new time, measured by driving the simulator directly
//     (goal <= 300 ms).
// Medians; the cases alternate in one loop so machine noise hits all alike.
// Runs against the bundled simulator in a throwaway HOME; needs `npm run build`.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/agyctl.js', import.meta.url));
const sim = fileURLToPath(new URL('../scripts/agy-acp-sim', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 25);

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-bench-check-'));
const home = path.join(root, 'home');
const stateDir = path.join(home, '.gemini', 'antigravity-acp');
fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
fs.writeFileSync(path.join(stateDir, 'settings.json'), '{"auth":{"type":"oauth-personal"}}\n');
// A logged-in state the simulator accepts (the values are placeholders).
fs.writeFileSync(
  path.join(stateDir, 'acp_token.json'),
  JSON.stringify({
    access_token: 'bench',
    refresh_token: 'bench',
    token_type: 'Bearer',
    expiry_date: Date.now() + 3600_000,
  }),
  { mode: 0o600 },
);
const env = {
  PATH: process.env.PATH,
  HOME: home,
  TMPDIR: root,
  LANG: 'C.UTF-8',
  NO_COLOR: '1',
  AGYCTL_SERVER: `${process.execPath} ${sim}`,
};

function timeSync(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, stdio: 'ignore', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** The simulator alone: spawn -> initialize answer -> session/new answer (and -> exit after stdin EOF). */
function timeSimulator() {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
    const child = spawn(process.execPath, [sim], { env, cwd: root, stdio: ['pipe', 'pipe', 'ignore'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('simulator did not answer within 30 s'));
    }, 30_000);
    const send = (id, method, params) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    let buf = '';
    let answered;
    let sessionId;
    child.stdout.on('data', (b) => {
      buf += b;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, nl) || '{}');
        buf = buf.slice(nl + 1);
        if (msg.id === 1) send(2, 'session/new', { cwd: root, mcpServers: [] });
        if (msg.id === 2) {
          if (msg.error) return reject(new Error(JSON.stringify(msg.error)));
          answered = ms();
          sessionId = msg.result.sessionId;
          child.stdin.end();
        }
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      for (const ext of ['.db', '.db-wal', '.db-shm', '.meta'])
        fs.rmSync(path.join(stateDir, 'conversations', `${sessionId}${ext}`), { force: true });
      resolve({ answered, exited: ms() });
    });
    send(1, 'initialize', {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
  });
}

const t = { node: [], version: [], static: [], live: [], simAnswer: [], simExit: [] };
try {
  for (let i = 0; i < runs; i += 1) {
    t.node.push(timeSync(['-e', '0']));
    t.version.push(timeSync([bin, '--version']));
    t.static.push(timeSync([bin, 'check']));
    t.live.push(timeSync([bin, 'check', '--live']));
    const s = await timeSimulator();
    t.simAnswer.push(s.answered);
    t.simExit.push(s.exited);
  }
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)]));
const f = (x) => `${x.toFixed(1)} ms`;
console.log(`runs: ${runs} (medians)`);
console.log(`node -e 0:                          ${f(m.node)}`);
console.log(`agyctl --version (CLI floor):       ${f(m.version)}  ratio ${(m.version / m.node).toFixed(2)}x`);
console.log(
  `agyctl check (static):              ${f(m.static)}  ratio ${(m.static / m.node).toFixed(2)}x  (goal <= 2.00x; ${f(m.static - m.version)} over --version)`,
);
console.log(`agyctl check --live:                ${f(m.live)}`);
console.log(`simulator spawn+initialize+new:     ${f(m.simAnswer)}  (to exit after stdin EOF: ${f(m.simExit)})`);
console.log(
  `check --live overhead:              ${f(m.live - m.simAnswer)}  (goal <= 300 ms; ${f(m.live - m.simExit)} beyond the simulator's full run to exit)`,
);
