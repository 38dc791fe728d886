#!/usr/bin/env node
// The README's first command: agyctl's main job against the bundled server
// simulator, in a throwaway HOME. It runs a real `agyctl login`, plays the
// user's laptop browser (and Google) by following the printed URL's redirect
// the way a browser coming through the SSH tunnel would, then checks the
// credentials live and across a restart, and takes a backup.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'agyctl.js');
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-demo-'));
const env = {
  ...process.env,
  HOME: home,
  AGYCTL_SERVER: `node ${path.join(root, 'scripts', 'agy-acp-sim')}`,
  AGY_SIM_STARTUP_MS: '400',
  XDG_STATE_HOME: path.join(home, '.local', 'state'),
};
const STEP_TIMEOUT_MS = 60_000;

const banner = (text) => process.stderr.write(`\n\x1b[1m$ ${text}\x1b[0m\n`);

function run(args, { allowFail = false } = {}) {
  banner(`agyctl ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [bin, ...args], { env, stdio: 'inherit', timeout: STEP_TIMEOUT_MS });
  if (r.status !== 0 && !allowFail) throw new Error(`agyctl ${args[0]} exited ${r.status}`);
  return r.status;
}

/** The laptop's browser: Google sends it back to redirect_uri with a code and the state it was given. */
function browserFollows(signInUrl) {
  const u = new URL(signInUrl);
  const back = new URL(u.searchParams.get('redirect_uri'));
  back.searchParams.set('code', `4/demo-${Math.random().toString(36).slice(2)}`);
  back.searchParams.set('state', u.searchParams.get('state'));
  return new Promise((resolve, reject) => {
    http.get(back, { agent: false, timeout: 5000 }, (res) => res.resume().on('end', resolve)).on('error', reject);
  });
}

function login() {
  banner('agyctl login --keep-probe-session   # on the headless box');
  return new Promise((resolve, reject) => {
    // One pipe for both streams (2>&1), so lines keep the order a terminal would show.
    const args = ['login', '--timeout', '2m', '--ssh-target', 'you@build-box.example.com', '--keep-probe-session'];
    const child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, bin, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const killer = setTimeout(() => child.kill('SIGINT'), STEP_TIMEOUT_MS);
    let seen = false;
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const url = chunk
        .toString()
        .split('\n')
        .find((l) => l.startsWith('https://accounts.google.com/'));
      if (url && !seen) {
        seen = true;
        process.stderr.write(
          '\n\x1b[2m[demo] playing your laptop: tunnel up, browser opens the URL, you sign in, Google redirects back...\x1b[0m\n',
        );
        browserFollows(url).catch(reject);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(killer);
      child.stdin.end();
      code === 0 ? resolve() : reject(new Error(`agyctl login exited ${code}`));
    });
  });
}

/** The redirect address a browser ends on when no tunnel carried it (what a person pastes back). */
function redirectAddress(signInUrl) {
  const u = new URL(signInUrl);
  const back = new URL(u.searchParams.get('redirect_uri'));
  back.searchParams.set('code', `4/demo-${Math.random().toString(36).slice(2)}`);
  back.searchParams.set('state', u.searchParams.get('state'));
  return back.toString();
}

/** A login that outlives its terminal: --detach returns at once; a second command finishes it. */
function detachedLogin() {
  banner('agyctl login --detach --restart   # returns at once; the login runs on under its supervisor');
  // Inherited streams: the output reads exactly as a user's terminal (or pipe) shows it.
  const r = spawnSync(
    process.execPath,
    [bin, 'login', '--detach', '--restart', '--timeout', '2m', '--ssh-target', 'you@build-box.example.com'],
    { env, stdio: ['ignore', 'inherit', 'inherit'], timeout: STEP_TIMEOUT_MS },
  );
  if (r.status !== 0) throw new Error(`agyctl login --detach exited ${r.status}`);
  const status = spawnSync(process.execPath, [bin, 'login', 'status', '--json'], { env, timeout: STEP_TIMEOUT_MS });
  const url = JSON.parse(status.stdout.toString()).login?.url;
  if (typeof url !== 'string') throw new Error('agyctl login status --json gave no sign-in URL');
  run(['login', 'status']);
  process.stderr.write(
    '\n\x1b[2m[demo] playing you after a reconnect: signed in without a tunnel, pasting the address the browser ended on into a second command...\x1b[0m\n',
  );
  banner('agyctl login finish   # the address on stdin');
  const f = spawnSync(process.execPath, [bin, 'login', 'finish'], {
    env,
    input: `${redirectAddress(url)}\n`,
    stdio: ['pipe', 'inherit', 'inherit'],
    timeout: STEP_TIMEOUT_MS,
  });
  if (f.status !== 0) throw new Error(`agyctl login finish exited ${f.status}`);
  run(['login', 'status', '--wait']);
}

try {
  process.stderr.write(`agyctl demo: a throwaway HOME at ${home}, the bundled simulator as the server.\n`);
  run(['probe']);
  run(['check', '--live'], { allowFail: true });
  process.stderr.write('\x1b[2m[demo] exit 3 above: not logged in yet. Now log in:\x1b[0m\n');
  await login();
  run(['check', '--restart', '--prompt']);
  run(['settings', 'show']);
  run(['check', '--json']);
  process.stderr.write(
    '\x1b[2m[demo] the login kept its proof conversation (--keep-probe-session): a SQLite database in WAL mode to back up\x1b[0m\n',
  );
  run(['sessions']);
  run(['backup']);
  const snapshots = path.join(env.XDG_STATE_HOME, 'agyctl', 'backups');
  const latest = fs
    .readdirSync(snapshots)
    .filter((d) => !d.startsWith('.'))
    .sort()
    .at(-1);
  run(['backup', 'verify', path.join(snapshots, latest)]);
  detachedLogin();
  process.stderr.write(
    '\n\x1b[1mDone.\x1b[0m Everything ran against the simulator; nothing outside the throwaway HOME was touched.\n',
  );
} finally {
  fs.rmSync(home, { recursive: true, force: true });
}
