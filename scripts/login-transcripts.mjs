#!/usr/bin/env node
// Records what `agyctl login` prints in representative flows against the
// simulator (--json NDJSON and text; foreground and --detach; status, finish,
// cancel; --verbose; --qr on a sized pseudo-terminal), with what differs from
// run to run (ports, pids, ids, times, temporary paths) replaced by
// placeholders, one file per flow. Record before and after a change to how a
// login is rendered, then `diff -r` the two directories: they must be equal.
// Usage: node scripts/login-transcripts.mjs OUT_DIR [path/to/bin/agyctl.js]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.resolve(process.argv[2] ?? 'login-transcripts');
const BIN = path.resolve(process.argv[3] ?? path.join(ROOT, 'bin', 'agyctl.js'));
const SIM = path.join(ROOT, 'scripts', 'agy-acp-sim');
const DEADLINE_MS = 45_000;

function sandbox(extraEnv = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-transcript-'));
  const home = path.join(root, 'home');
  fs.mkdirSync(home);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: root,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    AGYCTL_SERVER: `node ${SIM}`,
    ...extraEnv,
  };
  return { root, home, env, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Starts agyctl; `text()` is what it wrote so far; `done` resolves with its exit and both streams. */
function start(sb, args, { input, argv } = {}) {
  const child = spawn(argv?.[0] ?? process.execPath, argv ? argv.slice(1) : [BIN, ...args], {
    env: sb.env,
    cwd: sb.root,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  if (typeof input === 'string') child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
  const done = new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exit: code, stdout, stderr });
    }),
  );
  return { child, done, text: () => stdout + stderr, stdout: () => stdout };
}

async function until(what, probe, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const signInUrl = (text) => text.match(/https:\/\/accounts\.google\.com\/o\/oauth2\/v2\/auth\?[^\s"]+/)?.[0];

function redirectFor(url) {
  const u = new URL(url);
  const r = new URL(u.searchParams.get('redirect_uri'));
  r.searchParams.set('code', '4/0AfJohXm-FAKE-AUTH-CODE-do-not-print');
  r.searchParams.set('state', u.searchParams.get('state'));
  r.searchParams.set('scope', u.searchParams.get('scope') ?? '');
  return r.toString();
}

const httpGet = (url) =>
  new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
  });

/** Run to the end and return the result. */
const run = (sb, args, opts) => start(sb, args, opts).done;

/** What differs between two runs of the same flow, made equal. */
function normalise(text, sb) {
  return (
    text
      .split(sb.root)
      .join('<ROOT>')
      .replace(/https:\/\/accounts\.google\.com\/o\/oauth2\/v2\/auth\?[^\s"]+/g, '<SIGN-IN-URL>')
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<PORT>')
      .replace(/\b\d+:127\.0\.0\.1:<PORT>/g, '<PORT>:127.0.0.1:<PORT>')
      .replace(/\b([Pp])ort \d+/g, '$1ort <PORT>')
      .replace(/server \d+ /g, 'server <PID> ')
      .replace(/"port":( ?)\d+/g, '"port":$1<PORT>')
      .replace(/"(pid|ms|serverStartMs|elapsedS|remainingS|status)":( ?)\d+/g, '"$1":$2<N>')
      .replace(/agy-sim-signin-[0-9a-f]+/g, 'agy-sim-signin-<ID>')
      .replace(/^.*[█▀▄].*$/gm, '<QR>')
      // `login status --wait` says it waits only when the proof is still running as it starts.
      .replace(/^Waiting for the login to end .*\n/gm, '')
      .replace(/pid \d+/g, 'pid <PID>')
      .replace(/\d+ ms\b/g, '<N> ms')
      .replace(/\b\d+(\.\d+)?s\b/g, '<N>s')
      .replace(/\b\d+m\d+s\b/g, '<N>m<N>s')
      .replace(/\b[0-9a-f]{12}\b/g, '<ID>')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<TIME>')
      .replace(/"(sessionId|id|cancelled)":"[^"]+"/g, '"$1":"<ID>"')
      .replace(/session [0-9a-f-]{20,}/g, 'session <ID>')
      .replace(/kept: \S+/g, 'kept: <ID>')
  );
}

function save(name, sb, result) {
  const body = [
    `exit ${result.exit}`,
    '--- stdout',
    normalise(result.stdout, sb),
    '--- stderr',
    normalise(result.stderr, sb),
  ].join('\n');
  fs.writeFileSync(path.join(OUT, `${name}.txt`), body);
}

/** A foreground login the test signs in through the redirect (what a tunnel carries). */
async function foreground(name, args, env = {}, input = '') {
  const sb = sandbox(env);
  try {
    const login = start(sb, ['login', '--timeout', '30s', ...args], { input });
    // The URL to open is the one on stdout: --verbose shows the server's own output, abbreviated, on stderr.
    const url = await until('the sign-in URL', () => signInUrl(login.stdout()));
    await httpGet(redirectFor(url));
    save(name, sb, await login.done);
  } finally {
    sb.cleanup();
  }
}

/** `login --detach`, then status, finish (the address pasted), status --wait; or cancel. */
async function detached(name, json, { cancel = false } = {}) {
  const sb = sandbox();
  const j = json ? ['--json'] : [];
  try {
    const started = await run(sb, ['login', '--detach', '--timeout', '30s', ...j]);
    save(`${name}-1-detach`, sb, started);
    const url = signInUrl(started.stdout + started.stderr);
    save(`${name}-2-status`, sb, await run(sb, ['login', 'status', ...j]));
    if (cancel) {
      save(`${name}-3-cancel`, sb, await run(sb, ['login', 'cancel', ...j]));
      save(`${name}-4-status`, sb, await run(sb, ['login', 'status', ...j]));
      return;
    }
    save(`${name}-3-finish`, sb, await run(sb, ['login', 'finish', ...j], { input: `${redirectFor(url)}\n` }));
    save(`${name}-4-wait`, sb, await run(sb, ['login', 'status', '--wait', ...j]));
    save(`${name}-5-status`, sb, await run(sb, ['login', 'status', ...j]));
  } finally {
    sb.cleanup();
  }
}

/** A foreground login whose address is pasted on stdin (a pipe), as a person without a tunnel does. */
async function pasted(name, args) {
  const sb = sandbox({ AGY_SIM_LAUNCH: 'stdout' });
  try {
    const login = start(sb, ['login', '--timeout', '30s', ...args], { input: true });
    const url = await until('the sign-in URL', () => signInUrl(login.stdout()));
    await until('the paste prompt', () => (/waiting|paste/i.test(login.text()) ? true : undefined));
    login.child.stdin.end(`${redirectFor(url)}\n`);
    save(name, sb, await login.done);
  } finally {
    sb.cleanup();
  }
}

/** On a pseudo-terminal of a given size (script(1)), both streams together as the terminal shows them. */
async function onTerminal(name, cols, rows, args) {
  const sb = sandbox();
  try {
    const cmd = `stty cols ${cols} rows ${rows}; exec ${process.execPath} ${BIN} login --timeout 30s ${args.join(' ')}`;
    const login = start(sb, [], { argv: ['script', '-qec', cmd, '/dev/null'] });
    const url = await until('the sign-in URL', () => signInUrl(login.text().replace(/\r?\n/g, '')));
    await httpGet(redirectFor(url));
    const result = await login.done;
    // The prompt's countdown redraws itself each second: keep the lines, not their redraws.
    const lines = result.stdout
      .replace(/\r\n/g, '\n')
      .split('\n')
      .map((l) =>
        l
          .split('\r')
          .pop()
          .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g'), ''),
      );
    save(name, sb, { ...result, stdout: lines.filter((l) => !/^paste /.test(l)).join('\n') });
  } finally {
    sb.cleanup();
  }
}

const FLOWS = {
  'fg-json': () => foreground('fg-json', ['--json']),
  'fg-text': () => foreground('fg-text', []),
  'fg-text-verbose': () => foreground('fg-text-verbose', ['--verbose']),
  'fg-json-verbose': () => foreground('fg-json-verbose', ['--json', '--verbose']),
  'fg-json-qr': () => foreground('fg-json-qr', ['--json', '--qr']),
  'fg-text-elicitation': () => foreground('fg-text-elicitation', [], { AGY_SIM_ELICITATION: 'only' }),
  'fg-json-elicitation': () => foreground('fg-json-elicitation', ['--json'], { AGY_SIM_ELICITATION: 'only' }),
  'fg-text-stdout-noise': () =>
    foreground('fg-text-stdout-noise', ['--verbose'], { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_NOISE: 'both' }),
  'fg-text-settings-written': () => foreground('fg-text-settings-written', [], { AGY_SIM_AUTH_WRITES_SETTINGS: '1' }),
  'paste-text': () => pasted('paste-text', []),
  'paste-json': () => pasted('paste-json', ['--json']),
  'detach-json': () => detached('detach-json', true),
  'detach-text': () => detached('detach-text', false),
  'cancel-json': () => detached('cancel-json', true, { cancel: true }),
  'cancel-text': () => detached('cancel-text', false, { cancel: true }),
  'tty-120x60-qr': () => onTerminal('tty-120x60-qr', 120, 60, ['--qr']),
  'tty-100x90-qr': () => onTerminal('tty-100x90-qr', 100, 90, ['--qr']),
  'tty-80x24': () => onTerminal('tty-80x24', 80, 24, []),
};

fs.mkdirSync(OUT, { recursive: true });
const only = process.env.FLOWS?.split(',');
for (const [name, flow] of Object.entries(FLOWS)) {
  if (only && !only.includes(name)) continue;
  try {
    await flow();
    process.stdout.write(`${name}: recorded\n`);
  } catch (err) {
    process.stdout.write(`${name}: FAILED ${err.message}\n`);
    process.exitCode = 1;
  }
}
