// bench/connect-route: how connect learns that sshd forbids forwarding, and
// what each route costs. Runs in its own pair of network namespaces (names
// carry this process's pid) with the system's OpenSSH sshd configured four
// ways: default, AllowTcpForwarding no, DisableForwarding yes, and a
// PermitOpen that leaves the port out. Latency comes from a ProxyCommand
// that delays each direction by RTT/2 (the kernel here has no netem).
//  1. probes, BENCH_ROUNDS each, over one control master:
//     - W: `ssh -S ctl -W 127.0.0.1:<port>` with empty stdin (agyctl's probe):
//       allowed = exit 0;
//     - TCP: a bare connect to the laptop end of an added forward, waiting
//       BENCH_WINDOW_MS for ssh to close it: closed = refused;
//     each against the truth (does a GET through the forward get an answer),
//     with the median time.
//  2. routes: `agyctl connect --json --no-open` with the simulator on the
//     remote side, BENCH_RUNS runs per route: the time from the URL event to
//     the route event (the port check, the probe and the forward or the
//     relay's listen), and the callback: one GET from the laptop to
//     127.0.0.1:<port> until its answer (forward: the remote listener's page
//     through the channel; relay: the relay's page after the remote login
//     delivered it).
// Prints numbers; asserts nothing. Needs root, iproute2, openssh-server and
// a build (npm run build).
//
//   npm run build && node bench/connect-route.mjs
//   env: BENCH_ONLY (probes | routes), BENCH_ROUNDS (20), BENCH_RUNS (5), BENCH_RTTS (ms list, "0,100,400"), BENCH_WINDOW_MS (250)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'agyctl.js');
const sim = path.join(root, 'scripts', 'agy-acp-sim');
const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
const runs = Number(process.env.BENCH_RUNS ?? 5);
const rtts = (process.env.BENCH_RTTS ?? '0,100,400').split(',').map(Number);
const windowMs = Number(process.env.BENCH_WINDOW_MS ?? 250);
const only = process.env.BENCH_ONLY; // probes | routes
const REMOTE = '10.213.0.1';
const R = `agyb-r-${process.pid}`;
const L = `agyb-l-${process.pid}`;
const PORT = 46000 + (process.pid % 1000);
const CONFIGS = [
  ['default', []],
  ['AllowTcpForwarding no', ['AllowTcpForwarding no']],
  ['DisableForwarding yes', ['DisableForwarding yes']],
  ['PermitOpen 127.0.0.1:1', ['PermitOpen 127.0.0.1:1']],
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-bench-route-'));
const children = new Set();
const sh = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', ...opts });
const inNs = (ns, cmd, args, opts) => spawn('ip', ['netns', 'exec', ns, cmd, ...args], opts);
const median = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function track(child) {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

function run(ns, cmd, args, { input = '', timeoutMs = 20_000 } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = track(inNs(ns, cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err, ms: performance.now() - t0 });
    });
    child.stdin.end(input);
  });
}

function setUp() {
  for (const step of [
    ['netns', 'add', R],
    ['netns', 'add', L],
    ['link', 'add', 'agyb0', 'netns', R, 'type', 'veth', 'peer', 'name', 'agyb0', 'netns', L],
    ['-n', R, 'addr', 'add', `${REMOTE}/24`, 'dev', 'agyb0'],
    ['-n', L, 'addr', 'add', '10.213.0.2/24', 'dev', 'agyb0'],
    ['-n', R, 'link', 'set', 'lo', 'up'],
    ['-n', L, 'link', 'set', 'lo', 'up'],
    ['-n', R, 'link', 'set', 'agyb0', 'up'],
    ['-n', L, 'link', 'set', 'agyb0', 'up'],
  ]) {
    const r = sh('ip', step);
    if (r.status !== 0) throw new Error(`ip ${step.join(' ')}: ${r.stderr}`);
  }
  fs.mkdirSync('/run/sshd', { recursive: true });
  for (const k of ['host_key', 'client_key'])
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, k)]);
  fs.copyFileSync(path.join(dir, 'client_key.pub'), path.join(dir, 'authorized_keys'));
  fs.writeFileSync(
    path.join(dir, 'known_hosts'),
    `${REMOTE} ${fs.readFileSync(path.join(dir, 'host_key.pub'), 'utf8')}`,
  );
  // The delaying ProxyCommand: stdin -> socket and socket -> stdout, each chunk RTT/2 later.
  fs.writeFileSync(
    path.join(dir, 'delay.mjs'),
    `import net from 'node:net';
const [host, port, half] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]) / 2];
const s = net.connect(port, host);
process.stdin.on('data', (c) => setTimeout(() => s.write(c), half));
process.stdin.on('end', () => setTimeout(() => s.end(), half));
s.on('data', (c) => setTimeout(() => process.stdout.write(c), half));
s.on('close', () => setTimeout(() => process.exit(0), half));
s.on('error', () => process.exit(1));
`,
  );
}

function sshOptions(rtt) {
  const opts = [
    `IdentityFile=${path.join(dir, 'client_key')}`,
    `UserKnownHostsFile=${path.join(dir, 'known_hosts')}`,
    'GlobalKnownHostsFile=/dev/null',
    'StrictHostKeyChecking=yes',
    'BatchMode=yes',
    'IdentitiesOnly=yes',
    'User=root',
  ];
  if (rtt > 0) opts.push(`ProxyCommand=${process.execPath} ${path.join(dir, 'delay.mjs')} %h %p ${rtt}`);
  return opts;
}

async function startSshd(lines) {
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(
    config,
    // Only what this bench needs (root with a key is sshd's default); sshd takes a keyword's first value.
    [
      ...lines,
      `ListenAddress ${REMOTE}:22`,
      `HostKey ${path.join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'UsePAM no',
      'StrictModes no',
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      '',
    ].join('\n'),
  );
  const sshd = track(inNs(R, '/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] }));
  await new Promise((resolve, reject) => {
    let log = '';
    sshd.stderr.on('data', (c) => {
      log += c;
      if (/Server listening/.test(log)) resolve();
    });
    sshd.on('exit', () => reject(new Error(`sshd: ${log}`)));
  });
  return sshd;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

/** A remote listener like the server's: answers a GET, closes a connection that sends nothing. */
function remoteListener() {
  return track(
    inNs(R, process.execPath, ['-e', `require('http').createServer((q,r)=>r.end('ok')).listen(${PORT},'127.0.0.1')`], {
      stdio: 'ignore',
    }),
  );
}

/** A bare TCP connect to the laptop end of the forward: closed by ssh within the window = refused. */
function tcpProbe() {
  return new Promise((resolve) => {
    const run = spawn(
      'ip',
      [
        'netns',
        'exec',
        L,
        process.execPath,
        '-e',
        `const t0=performance.now();const s=require('net').connect(${PORT},'127.0.0.1');const end=(v)=>{console.log(v,performance.now()-t0);process.exit(0)};const t=setTimeout(()=>end('open'),${windowMs});s.on('close',()=>{clearTimeout(t);end('closed')});s.on('error',()=>{})`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    run.stdout.on('data', (c) => (out += c));
    run.on('close', () => {
      const [verdict, ms] = out.trim().split(' ');
      resolve({ allowed: verdict === 'open', ms: Number(ms) });
    });
  });
}

async function probes(rtt) {
  console.log(`\n== probes, RTT ${rtt} ms (${rounds} rounds each; TCP window ${windowMs} ms) ==`);
  console.log('sshd config                 truth     -W: right  median ms   TCP: right  median ms');
  for (const [name, lines] of CONFIGS) {
    const sshd = await startSshd(lines);
    const listener = remoteListener();
    await sleep(300);
    const ctl = path.join(dir, 'ctl');
    const base = sshOptions(rtt).flatMap((o) => ['-o', o]);
    const master = track(
      inNs(L, 'ssh', [...base, '-M', '-S', ctl, '-N', '-o', 'ControlPersist=no', '--', REMOTE], { stdio: 'ignore' }),
    );
    while (!fs.existsSync(ctl)) await sleep(20);
    const client = [...base, '-S', ctl, '-o', 'ControlMaster=no'];
    await run(L, 'ssh', [...client, '-O', 'forward', '-L', `${PORT}:127.0.0.1:${PORT}`, '--', REMOTE]);
    const truthRun = await run(L, 'curl', [
      '-s',
      '-m',
      '5',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      `http://127.0.0.1:${PORT}/`,
    ]);
    const truth = truthRun.out === '200';
    const w = [];
    const t = [];
    for (let i = 0; i < rounds; i++) {
      const r = await run(L, 'ssh', [...client, '-W', `127.0.0.1:${PORT}`, '--', REMOTE], { timeoutMs: 5_000 });
      w.push({ allowed: r.code === 0, ms: r.ms });
      t.push(await tcpProbe());
    }
    const right = (xs) => `${xs.filter((x) => x.allowed === truth).length}/${xs.length}`;
    console.log(
      `${name.padEnd(27)} ${(truth ? 'allowed' : 'refused').padEnd(9)} ${right(w).padStart(10)} ${median(
        w.map((x) => x.ms),
      )
        .toFixed(0)
        .padStart(10)} ${right(t).padStart(12)} ${median(t.map((x) => x.ms))
        .toFixed(0)
        .padStart(10)}`,
    );
    await run(L, 'ssh', [...client, '-O', 'exit', '--', REMOTE]);
    await stop(master);
    await stop(listener);
    await stop(sshd);
  }
}

function get(url) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(
      'ip',
      [
        'netns',
        'exec',
        L,
        process.execPath,
        '-e',
        `const t0=performance.now();require('http').get(process.argv[1],{agent:false},(r)=>{r.resume();r.on('end',()=>console.log(r.statusCode,(performance.now()-t0).toFixed(1)))}).on('error',(e)=>console.log('error',e.code))`,
        url,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('close', () => {
      const [status, ms] = out.trim().split(' ');
      resolve({ status, ms: Number(ms), total: performance.now() - t0 });
    });
  });
}

async function connectOnce(rtt) {
  const home = fs.mkdtempSync(path.join(dir, 'home-'));
  const remoteAgyctl = `env HOME=${home} TMPDIR=${home} NO_COLOR=1 AGY_SIM_CALLBACK_PORT=${PORT} AGYCTL_SERVER='${process.execPath} ${sim}' ${process.execPath} ${bin}`;
  const args = [
    bin,
    'connect',
    `root@${REMOTE}`,
    '--json',
    '--no-open',
    '--timeout',
    '60s',
    '--remote-agyctl',
    remoteAgyctl,
  ];
  for (const o of sshOptions(rtt)) args.push('--ssh-option', o);
  const child = track(
    inNs(L, process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, TMPDIR: home } }),
  );
  const seen = {};
  let buf = '';
  const result = new Promise((resolve) => {
    child.stdout.on('data', async (c) => {
      buf += c;
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const ev = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\n');
        seen[ev.event] = { ...ev, at: performance.now() };
        if (ev.event === 'route') {
          const state = new URL(seen.url.url).searchParams.get('state');
          seen.callback = await get(`http://127.0.0.1:${PORT}/?code=bench&state=${state}`);
        }
      }
    });
    child.on('close', (code) => resolve(code));
  });
  const code = await result;
  return {
    code,
    route: seen.route?.route,
    probeMs: seen.route?.probeMs,
    choose: seen.route && seen.url ? seen.route.at - seen.url.at : NaN,
    callback: seen.callback?.ms ?? NaN,
    status: seen.callback?.status,
  };
}

async function routes(rtt) {
  console.log(`\n== routes, RTT ${rtt} ms (agyctl connect with the simulator, ${runs} runs each; medians) ==`);
  console.log('sshd config                 route   exit0  probe ms  url->route ms  callback ms');
  for (const [name, lines] of [CONFIGS[0], CONFIGS[1]]) {
    const sshd = await startSshd(lines);
    const rs = [];
    for (let i = 0; i < runs; i++) rs.push(await connectOnce(rtt));
    const m = (k) => median(rs.map((r) => r[k])).toFixed(0);
    console.log(
      `${name.padEnd(27)} ${String(rs[0].route).padEnd(7)} ${`${rs.filter((r) => r.code === 0 && r.status === '200').length}/${rs.length}`.padStart(5)} ${m('probeMs').padStart(9)} ${m('choose').padStart(14)} ${m('callback').padStart(12)}`,
    );
    await stop(sshd);
  }
}

async function main() {
  setUp();
  try {
    if (only !== 'routes') for (const rtt of rtts) await probes(rtt);
    if (only !== 'probes') for (const rtt of rtts) await routes(rtt);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    sh('ip', ['netns', 'del', R]);
    sh('ip', ['netns', 'del', L]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
