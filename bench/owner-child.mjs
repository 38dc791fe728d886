// bench/owner-child: what root pays for running a command as the state dir's owner.
// Static `agyctl check` on a state dir of a user created for the run (useradd,
// removed at the end): as root (agyctl starts its child as the owner, see
// docs/security.md) against the same check run directly as that user. The
// difference is the owner's child: its start-up, its drop, root's relays.
// Medians; the cases alternate in one loop so machine noise hits both alike.
// Needs root and `npm run build`. AGYCTL_BENCH_BIN=<checkout>/bin/agyctl.js
// measures another checkout (e.g. the commit before a change) with the same
// user and state dir.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.getuid?.() !== 0)
  throw new Error('bench/owner-child needs root: it creates a user and runs agyctl as root');
const bin = process.env.AGYCTL_BENCH_BIN ?? fileURLToPath(new URL('../bin/agyctl.js', import.meta.url));
for (let d = path.dirname(bin); d !== '/'; d = path.dirname(d))
  if ((fs.statSync(d).mode & 0o001) === 0)
    throw new Error(`${d} is closed to other users: the owner's child cannot run ${bin}`);
const runs = Number(process.env.BENCH_RUNS ?? 15);

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-bench-owner-'));
fs.chmodSync(root, 0o755);
const home = path.join(root, 'home');
const stateDir = path.join(home, '.gemini', 'antigravity-acp');
fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
fs.writeFileSync(path.join(stateDir, 'settings.json'), '{"auth":{"type":"oauth-personal"}}\n', { mode: 0o600 });
const name = `agyb${crypto.randomBytes(3).toString('hex')}`;
execFileSync('useradd', ['--no-create-home', '--home-dir', home, '--shell', '/usr/sbin/nologin', name]);
const cleanup = () => {
  spawnSync('userdel', [name], { stdio: 'ignore' });
  fs.rmSync(root, { recursive: true, force: true });
};
process.on('exit', cleanup);
const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
for (const p of [home, path.dirname(stateDir), stateDir, path.join(stateDir, 'settings.json')])
  fs.chownSync(p, uid, gid);

const env = { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1' };

function time(asUser) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, 'check', '--json'], {
    env,
    cwd: root,
    stdio: 'ignore',
    timeout: 60_000,
    ...(asUser ? { uid, gid } : {}),
  });
  // Exit 3: no credentials yet, which is what the check is to find.
  if (r.status !== 3 && r.status !== 0)
    throw new Error(`check ${asUser ? 'as the user' : 'as root'} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

time(true);
time(false); // warm the page cache
const asUser = [];
const asRoot = [];
for (let i = 0; i < runs; i++) {
  asUser.push(time(true));
  asRoot.push(time(false));
}
const u = median(asUser);
const r = median(asRoot);
console.log(`agyctl: ${bin}`);
console.log(`check as the user (median of ${runs}): ${u.toFixed(0)} ms`);
console.log(`check as root, via the owner's child: ${r.toFixed(0)} ms`);
console.log(`the owner's child costs root: ${(r - u).toFixed(0)} ms`);
