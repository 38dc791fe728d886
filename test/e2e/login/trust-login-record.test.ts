/**
 * The login record as another local user would attack it:
 * with a long HOME the record falls back to a shared temp dir, where
 * `nobody` plants one. agyctl runs as root (as in CI). Every reader
 * (`login status|finish|cancel`, the pending-login notice) must refuse a
 * record it does not own, and no signal may go to a process the record
 * names unless it is the very process a login started.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { liveProcessStart as procStart } from '../../../src/util/os/process.js';
import { agyctl, makeSandbox, parseEvents, parseJson, type Sandbox, waitNoProcesses } from '../../helpers/cli.js';

const NOBODY = 65534;

if (process.getuid?.() !== 0)
  throw new Error('these tests run as root (as in CI): they check what root does with a record another user planted');

let sandbox: Sandbox | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    try {
      if (c.pid) process.kill(-c.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (sandbox) {
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  }
  sandbox = undefined;
});

interface Box extends Sandbox {
  /** The shared, sticky temp dir (like /tmp) that TMPDIR points at. */
  shared: string;
  /** Where the fallback puts this state dir's record. */
  recordDir: string;
}

/** A HOME too long for the record's socket path, so the record falls back under TMPDIR, a sticky dir everyone can write. */
function longHomeBox(extraEnv: NodeJS.ProcessEnv = {}): Box {
  const sb = makeSandbox();
  sandbox = sb;
  fs.chmodSync(sb.root, 0o755);
  const home = path.join(sb.root, 'h'.repeat(110));
  fs.mkdirSync(home, { mode: 0o700 });
  const shared = path.join(sb.root, 'tmp');
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o1777);
  Object.assign(sb.env, { HOME: home, TMPDIR: shared, ...extraEnv });
  sb.home = home;
  sb.stateDir = path.join(home, '.gemini', 'antigravity-acp');
  const hash = crypto.createHash('sha256').update(path.resolve(sb.stateDir)).digest('hex').slice(0, 16);
  return Object.assign(sb, { shared, recordDir: path.join(shared, 'agyctl-0', 'logins', hash) });
}

/** A record dir made (and owned) by `uid`, mode 0700, holding state.json. */
function plantRecord(dir: string, state: Record<string, unknown>, uid = NOBODY): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(state), { mode: 0o600 });
  for (let d = dir, i = 0; i < 3; i++, d = path.dirname(d)) fs.chownSync(d, uid, uid);
  fs.chownSync(path.join(dir, 'state.json'), uid, uid);
}

function pendingState(sb: Sandbox, over: Record<string, unknown>): Record<string, unknown> {
  const now = Date.now();
  return {
    version: 1,
    id: 'planted',
    stateDir: sb.stateDir,
    pid: 2 ** 22 + 4321,
    pidStart: '1',
    startedAt: now,
    deadline: now + 600_000,
    endBy: now + 900_000,
    phase: 'waiting',
    port: 4242,
    url: 'https://accounts.google.com/o/oauth2/v2/auth?client_id=x',
    ...over,
  };
}

/** A long-lived process in its own group (as a login's server would be), started as `uid` with extra argv words. */
function sleeper(uid: number, words: string[] = []): ChildProcess & { pid: number } {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ...words], {
    detached: true,
    stdio: 'ignore',
    ...(uid === 0 ? {} : { uid, gid: uid }),
  });
  children.push(child);
  return child as ChildProcess & { pid: number };
}

async function started(pid: number): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const start = procStart(pid);
    if (start) return start;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`process ${pid} did not start`);
}

const alive = (pid: number): boolean => procStart(pid) !== undefined;

describe('a record another user planted in the shared fallback', () => {
  it('status refuses it (exit 2, login-record-unusable): the process group it names is not killed, the dir it names is not removed', async () => {
    const sb = longHomeBox();
    const victim = sleeper(0);
    const victimDir = path.join(sb.root, 'agyctl-login-Victim');
    fs.mkdirSync(victimDir, { mode: 0o700 });
    plantRecord(
      sb.recordDir,
      pendingState(sb, { server: { pid: victim.pid, start: await started(victim.pid) }, shimDirs: [victimDir] }),
    );
    const r = await agyctl(['login', 'status', '--json'], sb);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(parseJson(r.stdout)).toMatchObject({ ok: false, error: { code: 'login-record-unusable' } });
    expect(alive(victim.pid)).toBe(true);
    expect(fs.existsSync(victimDir)).toBe(true);
  });

  it('finish sends the pasted redirect (with its code) to no socket of the planter', async () => {
    const sb = longHomeBox();
    fs.mkdirSync(sb.recordDir, { recursive: true, mode: 0o700 });
    const heard = path.join(sb.recordDir, 'heard');
    const sock = path.join(sb.recordDir, 'sock');
    const listener = spawn(
      process.execPath,
      [
        '-e',
        `require('net').createServer((s) => s.on('data', (d) => {
           require('fs').appendFileSync(${JSON.stringify(heard)}, d);
           s.end(JSON.stringify({ ok: true, event: { event: 'redirect-delivered', status: 200 } }) + '\\n');
         })).listen(${JSON.stringify(sock)}, () => console.log('up'));`,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'inherit'], uid: NOBODY, gid: NOBODY },
    );
    children.push(listener);
    plantRecord(sb.recordDir, pendingState(sb, {}));
    await new Promise<void>((resolve) => listener.stdout?.once('data', () => resolve()));
    const pid = listener.pid!;
    plantRecord(sb.recordDir, pendingState(sb, { pid, pidStart: await started(pid) }));
    const r = await agyctl(['login', 'finish', '--json'], sb, {
      input: 'http://127.0.0.1:4242/?state=s&code=4/SECRET-CODE\n',
    });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(parseJson(r.stdout)).toMatchObject({ ok: false, error: { code: 'login-record-unusable' } });
    expect(fs.existsSync(heard)).toBe(false);
  });

  it('other commands print no pending-login notice from it', async () => {
    const sb = longHomeBox();
    const planter = sleeper(NOBODY, ['__login-supervisor']);
    plantRecord(sb.recordDir, pendingState(sb, { pid: planter.pid, pidStart: await started(planter.pid) }));
    const r = await agyctl(['settings', 'show'], sb);
    expect(r.stderr).not.toContain('a login is pending');
  });
});

describe('a record of our own names processes and text', () => {
  it('cancel does not kill a supervisor pid that runs as another user, even with the right start time and command', async () => {
    const sb = longHomeBox();
    const other = sleeper(NOBODY, ['__login-supervisor']);
    plantRecord(sb.recordDir, pendingState(sb, { pid: other.pid, pidStart: await started(other.pid) }), 0);
    const r = await agyctl(['login', 'cancel', '--json'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(alive(other.pid)).toBe(true);
  });

  it('status does not kill a server pid whose command line is not the one recorded (a recycled pid)', async () => {
    const sb = longHomeBox();
    const victim = sleeper(0);
    plantRecord(
      sb.recordDir,
      pendingState(sb, { server: { pid: victim.pid, start: await started(victim.pid), cmd: 'f'.repeat(32) } }),
      0,
    );
    const r = await agyctl(['login', 'status', '--json'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ login: { status: 'died' } });
    expect(alive(victim.pid)).toBe(true);
  });

  it("status prints the record's URL and tunnel without their escape sequences", async () => {
    const sb = longHomeBox();
    const supervisor = sleeper(0, ['__login-supervisor']);
    plantRecord(
      sb.recordDir,
      pendingState(sb, {
        pid: supervisor.pid,
        pidStart: await started(supervisor.pid),
        url: 'https://accounts.google.com/x\u001b]0;owned\u0007?a=1',
        tunnel: 'ssh -N -L 4242:127.0.0.1:4242 box\u001b[2J',
      }),
      0,
    );
    const r = await agyctl(['login', 'status'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('Sign-in URL: https://accounts.google.com/x?a=1');
    expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});

describe('where the record goes when the state base is too long', () => {
  it('prefers $XDG_RUNTIME_DIR (ours, 0700) over the shared temp dir', async () => {
    const run = path.join(makeRun(), 'run');
    const sb = longHomeBox({ XDG_RUNTIME_DIR: run });
    const r = await agyctl(['login', '--detach', '--json', '--timeout', '30s'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(parseEvents(r.stdout).map((e) => e.event)).toContain('detached');
    const hash = path.basename(sb.recordDir);
    expect(fs.existsSync(path.join(run, 'agyctl', 'logins', hash, 'state.json'))).toBe(true);
    expect(fs.existsSync(sb.recordDir)).toBe(false);
    expect((await agyctl(['login', 'cancel'], sb)).exitCode).toBe(0);
  });

  it('a fallback too long for a unix socket is refused with exit 2 and a named code', async () => {
    const sb = longHomeBox();
    const longTmp = path.join(sb.root, 't'.repeat(100));
    fs.mkdirSync(longTmp, { mode: 0o700 });
    sb.env.TMPDIR = longTmp;
    const status = await agyctl(['login', 'status', '--json'], sb);
    expect(status.exitCode, status.stderr).toBe(2);
    expect(parseJson(status.stdout)).toMatchObject({ error: { code: 'login-record-path-too-long' } });
    const login = await agyctl(['login', '--json', '--timeout', '5s'], sb);
    expect(login.exitCode, login.stderr).toBe(2);
    expect(parseEvents(login.stdout).at(-1)).toMatchObject({ event: 'error', code: 'login-record-path-too-long' });
    expect(fs.readdirSync(longTmp)).toEqual([]);
  });
});

/** A private dir (0700, root's) inside the sandbox that is about to be made, for XDG_RUNTIME_DIR. */
let runRoot: string | undefined;
function makeRun(): string {
  runRoot = fs.mkdtempSync(path.join('/tmp', 'agyctl-run-'));
  fs.mkdirSync(path.join(runRoot, 'run'), { mode: 0o700 });
  return runRoot;
}
afterEach(() => {
  if (runRoot) fs.rmSync(runRoot, { recursive: true, force: true });
  runRoot = undefined;
});
