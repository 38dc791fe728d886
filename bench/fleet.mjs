// bench/fleet: fleet connect on 10 hosts, and what agyctl adds per host
// beyond the servers' own start-up (goal <= 2 s per host).
//
// Hosts: the fleet lab of the tests (test/helpers/fleet-lab.ts, loaded
// through vite's SSR loader): 10 network namespaces with their own sshd,
// HOME and the simulator as the server, reached from a "laptop" namespace
// over real OpenSSH. The browser is test/helpers/browser-shim.mjs (it plays
// the user and Google at once, so human time is ~0). Needs root.
//
// Per host, from connect's --json events: total (from the host's turn to its
// host-result; connect checks the next host while the current one signs in,
// so that work is not in the total), and the servers' own start-up: the
// remote check's live check (spawn, initialize, session/new; only when it
// did not run ahead), the login's server (server-started.ms) and the proof
// server (verified.serverStartMs). added = total - those. Run 1 logs
// every host in; run 2 finds them healthy and skips them.
// BENCH_HOSTS (default 10), BENCH_SIM_STARTUP_MS (simulator cold start,
// default 0; the real server takes 5-6 s, which is not agyctl's time).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { createServer } from 'vite';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'agyctl.js');
const shim = path.join(root, 'test', 'helpers', 'browser-shim.mjs');
const hosts = Number(process.env.BENCH_HOSTS ?? 10);
const startupMs = String(process.env.BENCH_SIM_STARTUP_MS ?? 0);

const vite = await createServer({
  root,
  configFile: false,
  logLevel: 'error',
  appType: 'custom',
  server: { middlewareMode: true, hmr: false, ws: false },
  optimizeDeps: { noDiscovery: true, include: [] },
});
const { createFleetLab } = await vite.ssrLoadModule(path.join(root, 'test', 'helpers', 'fleet-lab.ts'));
await vite.close();

const made = await createFleetLab({ hosts, hostEnv: () => ({ AGY_SIM_STARTUP_MS: startupMs }) });
if (!made.lab) {
  console.error(`bench/fleet: the lab cannot be created here: ${made.unavailable}`);
  process.exit(2);
}
const lab = made.lab;
const laptop = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-bench-fleet-'));
const browser = path.join(laptop, 'browser');
fs.writeFileSync(browser, `#!/bin/sh\nexec ${process.execPath} ${shim} "$@"\n`, { mode: 0o755 });
const env = {
  PATH: `${lab.sshBin}:${process.env.PATH}`,
  HOME: laptop,
  TMPDIR: laptop,
  NO_COLOR: '1',
  LANG: 'C.UTF-8',
  BROWSER: browser,
  SHIM_LOG: path.join(laptop, 'browser.log'),
};

async function run(label) {
  const t0 = performance.now();
  const r = await execa(
    'ip',
    [
      'netns',
      'exec',
      lab.laptop,
      process.execPath,
      bin,
      'connect',
      ...lab.hosts.map((h) => h.name),
      '--json',
      '--timeout',
      '60s',
    ],
    { env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 600_000, cwd: laptop },
  );
  const wall = performance.now() - t0;
  const events = String(r.stdout)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const rows = lab.hosts.map((h) => {
    const of = (name) => events.find((e) => e.event === name && e.host === h.name);
    const result = of('host-result');
    // A check that ran ahead (while the previous host signed in) costs the person nothing: only time waited for it counts.
    const checked = of('checked');
    const servers =
      (checked?.ahead ? 0 : (checked?.liveMs ?? 0)) +
      (of('server-started')?.ms ?? 0) +
      (of('verified')?.serverStartMs ?? 0);
    return {
      host: h.name,
      result: result?.result ?? '?',
      total: result?.ms ?? NaN,
      ssh: of('connected')?.ms ?? NaN,
      check: checked?.ms ?? NaN,
      ahead: checked?.ahead ? 'yes' : 'no',
      servers,
      added: (result?.ms ?? NaN) - servers,
    };
  });
  console.log(
    `\n${label}: exit ${r.exitCode}, wall ${Math.round(wall)} ms for ${hosts} hosts (simulator start-up ${startupMs} ms)`,
  );
  console.log('host  result     total   ssh   check  ahead servers  added');
  for (const x of rows)
    console.log(
      `${x.host.padEnd(5)} ${x.result.padEnd(10)} ${String(x.total).padStart(6)} ${String(x.ssh).padStart(5)} ${String(x.check).padStart(6)} ${x.ahead.padStart(5)} ${String(x.servers).padStart(8)} ${String(x.added).padStart(6)}`,
    );
  const added = rows.map((x) => x.added).sort((a, b) => a - b);
  console.log(
    `added per host: median ${added[Math.floor(added.length / 2)]} ms, max ${added.at(-1)} ms (goal <= 2000 ms)`,
  );
  if (r.exitCode !== 0) console.log(String(r.stderr).split('\n').slice(-10).join('\n'));
}

try {
  for (const h of lab.hosts) fs.rmSync(path.join(h.stateDir, 'acp_token.json'), { force: true });
  await run('run 1 (every host logs in)');
  await run('run 2 (every host healthy: skipped)');
} finally {
  await lab.teardown();
  fs.rmSync(laptop, { recursive: true, force: true });
}
