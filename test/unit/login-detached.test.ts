/**
 * The pieces of a login that outlives its terminal: where its record lives
 * and how private it is, how a dead or recycled supervisor pid is told
 * apart, the socket protocol's bounds, and the commands connect prints to
 * resume by hand.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manualResume } from '../../src/connect/reconnect.js';
import { inspect } from '../../src/login/client.js';
import { ensureRecordDir, isPending, type LoginState, recordPaths } from '../../src/login/record.js';
import { killRecorded, MAX_LINE, request, runSupervisor } from '../../src/login/supervisor.js';
import {
  isRecordedProcess,
  liveProcessStart as procStart,
  recordProcess,
  sameProcessAlive,
} from '../../src/util/os/process.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
/** The record of a login on /srv/a waiting for its redirect. */
const waitingLogin = (given: Pick<LoginState, 'pid' | 'pidStart'> & Partial<LoginState>): LoginState => ({
  version: 1,
  id: 'x',
  stateDir: '/srv/a',
  startedAt: Date.now(),
  deadline: Date.now() + 60_000,
  endBy: Date.now() + 120_000,
  phase: 'waiting',
  ...given,
});
const scratch = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-detached-'));
  made.push(d);
  return d;
};

describe('login record location', () => {
  it('one record per state dir under $XDG_STATE_HOME/agyctl/logins, else ~/.local/state', () => {
    const root = scratch();
    const a = recordPaths({ XDG_STATE_HOME: path.join(root, 'xdg') }, '/srv/a/.gemini/antigravity-acp');
    const b = recordPaths({ XDG_STATE_HOME: path.join(root, 'xdg') }, '/srv/b/.gemini/antigravity-acp');
    expect(path.dirname(a.dir)).toBe(path.join(root, 'xdg', 'agyctl', 'logins'));
    expect(a.dir).not.toBe(b.dir);
    expect(recordPaths({ XDG_STATE_HOME: path.join(root, 'xdg') }, '/srv/a/.gemini/antigravity-acp/').dir).toBe(a.dir);
    expect(path.dirname(recordPaths({ HOME: root, XDG_STATE_HOME: 'relative/ignored' }, '/x').dir)).toBe(
      path.join(root, '.local', 'state', 'agyctl', 'logins'),
    );
  });

  it('falls back to a private dir under $TMPDIR when the socket path would be too long for a unix socket', () => {
    const root = scratch();
    const long = path.join(root, 'x'.repeat(120));
    const p = recordPaths({ XDG_STATE_HOME: long, TMPDIR: root }, '/srv/a');
    expect(p.dir.startsWith(path.join(root, `agyctl-${process.getuid?.() ?? 'u'}`, 'logins'))).toBe(true);
    expect(Buffer.byteLength(p.socket)).toBeLessThanOrEqual(100);
  });

  it('creates the record dir 0700 and narrows a wider one; refuses a world-writable parent', () => {
    const root = scratch();
    const p = recordPaths({ XDG_STATE_HOME: root }, '/srv/a');
    ensureRecordDir(p);
    expect(fs.statSync(p.dir).mode & 0o777).toBe(0o700);
    fs.chmodSync(p.dir, 0o755);
    ensureRecordDir(p);
    expect(fs.statSync(p.dir).mode & 0o777).toBe(0o700);
    fs.chmodSync(path.dirname(p.dir), 0o777);
    expect(() => ensureRecordDir(p)).toThrow(/writable by everyone/);
  });

  it('a record dir that cannot be created is a usage error naming the fix, not a bug', () => {
    const root = scratch();
    fs.writeFileSync(path.join(root, 'file'), '');
    const p = recordPaths({ XDG_STATE_HOME: path.join(root, 'file') }, '/srv/a');
    expect(() => ensureRecordDir(p)).toThrow(
      expect.objectContaining({
        exit: 2,
        code: 'login-record-unusable',
        hint: expect.stringContaining('XDG_STATE_HOME'),
      }),
    );
  });
});

describe('supervisor liveness', () => {
  it('knows this process, and does not mistake a recycled pid (other start time) or a missing one for it', () => {
    const start = procStart(process.pid);
    expect(start).toMatch(/^\d+$/);
    expect(sameProcessAlive(process.pid, start)).toBe(true);
    expect(sameProcessAlive(process.pid, `${start}0`)).toBe(false);
    expect(sameProcessAlive(2 ** 22 + 12345, undefined)).toBe(false);
  });

  it('a pending record whose supervisor is gone is reported died and gets an outcome (exit 4), not left pending', () => {
    const root = scratch();
    const p = recordPaths({ XDG_STATE_HOME: root }, '/srv/a');
    ensureRecordDir(p);
    const state = waitingLogin({ pid: 2 ** 22 + 12345, pidStart: '1', port: 4242 });
    fs.writeFileSync(p.state, JSON.stringify(state));
    expect(isPending(state)).toBe(true);
    const seen = inspect(p);
    expect(seen.kind).toBe('died');
    const again = inspect(p);
    expect(again).toMatchObject({
      kind: 'ended',
      state: { phase: 'done', outcome: { exit: 4, code: 'login-supervisor-died' } },
    });
  });
});

describe('signals go only to the process a record names', () => {
  it('never to pid 1 or below (kill(-1) would reach every process), whatever the record says', () => {
    for (const pid of [1, 0, -1]) {
      const p = { pid, start: procStart(1) ?? '1' };
      expect(isRecordedProcess(p, () => true)).toBe(false);
      expect(killRecorded(p, () => true)).toBe(false);
    }
  });

  it('this process as recorded matches; another start time, command line or no start time does not', () => {
    const self = recordProcess(process.pid);
    expect(self.cmd).toMatch(/^[0-9a-f]{32}$/);
    expect(isRecordedProcess(self)).toBe(true);
    expect(isRecordedProcess({ ...self, start: `${self.start}0` })).toBe(false);
    expect(isRecordedProcess({ ...self, cmd: '0'.repeat(32) })).toBe(false);
    expect(isRecordedProcess({ pid: process.pid, start: undefined }, () => true)).toBe(false);
    // No recorded command line: only one the caller recognises.
    expect(isRecordedProcess({ pid: process.pid, start: self.start }, () => false)).toBe(false);
    expect(isRecordedProcess({ pid: process.pid, start: self.start })).toBe(false);
  });
});

describe('the socket protocol', () => {
  it('a request to a socket nobody listens on answers undefined at once', async () => {
    const t0 = Date.now();
    expect(await request(path.join(scratch(), 'sock'), { op: 'ping' }, 5_000)).toBeUndefined();
    expect(Date.now() - t0).toBeLessThan(4_000);
  });

  it('a request nobody answers ends at its deadline; an overlong answer line is cut off', async () => {
    const dir = scratch();
    const silent = net.createServer(() => undefined);
    const chatty = net.createServer((s) => s.write('x'.repeat(MAX_LINE + 10)));
    await new Promise<void>((r) => silent.listen(path.join(dir, 'silent'), r));
    await new Promise<void>((r) => chatty.listen(path.join(dir, 'chatty'), r));
    try {
      expect(await request(path.join(dir, 'silent'), { op: 'ping' }, 300)).toBeUndefined();
      // Cut off when the line passes MAX_LINE, not at the (much later) deadline.
      const t0 = Date.now();
      expect(await request(path.join(dir, 'chatty'), { op: 'ping' }, 20_000)).toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      silent.close();
      chatty.close();
    }
  });
});

describe('resuming by hand after connect gives up', () => {
  it('prints ssh commands with the same options, the tunnel for the port, finish and status --wait, quoted for a shell', () => {
    const lines = manualResume(
      {
        destination: 'ops@box',
        sshOptions: ['Port=2222', 'IdentityFile=/k ey'],
        remoteAgyctl: 'env HOME=/h agyctl',
        sshTimeoutMs: 1,
        deadline: 0,
      },
      4242,
    );
    expect(lines[0]).toBe("ssh -o Port=2222 -o 'IdentityFile=/k ey' -- ops@box 'env HOME=/h agyctl login status'");
    expect(lines[1]).toMatch(
      /^ssh -o Port=2222 -o 'IdentityFile=\/k ey' -N -L 4242:127\.0\.0\.1:4242 -o ExitOnForwardFailure=yes -- ops@box/,
    );
    expect(lines.join('\n')).toContain("'env HOME=/h agyctl login finish'");
    expect(lines.at(-1)).toBe(
      "ssh -o Port=2222 -o 'IdentityFile=/k ey' -- ops@box 'env HOME=/h agyctl login status --wait'",
    );
  });
});

describe('the supervisor after the login ended', () => {
  /** A socket connected while the login ran; its paste arrives after the end, before the socket closes. */
  async function pasteAfterTheEnd(exit: 0 | 4): Promise<Record<string, unknown>> {
    const root = scratch();
    const paths = recordPaths({ XDG_STATE_HOME: root }, '/srv/a');
    ensureRecordDir(paths);
    const state = waitingLogin({ pid: process.pid, pidStart: undefined });
    let endRun: () => void = () => undefined;
    let ready: () => void = () => undefined;
    const listening = new Promise<void>((resolve) => {
      ready = resolve;
    });
    const supervisor = runSupervisor({
      paths,
      state,
      hardDeadline: Date.now() + 60_000,
      signal: new AbortController().signal,
      onReady: () => ready(),
      run: () =>
        new Promise((resolve) => {
          endRun = () => resolve(exit === 0 ? { exit } : { exit, code: 'login-failed' });
        }),
    });
    await listening;
    const socket = net.connect({ path: paths.socket });
    await new Promise((resolve) => socket.once('connect', resolve));
    endRun();
    for (const deadline = Date.now() + 5_000; state.phase !== 'done' && Date.now() < deadline; )
      await new Promise((resolve) => setImmediate(resolve));
    expect(state.phase).toBe('done');
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      socket.once('data', (chunk) => resolve(JSON.parse(String(chunk).split('\n')[0] ?? '')));
      socket.once('error', reject);
    });
    socket.write(`${JSON.stringify({ op: 'finish', line: 'http://127.0.0.1:1/?state=s&code=c' })}\n`);
    const got = await answer;
    socket.destroy();
    await supervisor;
    return got;
  }

  it('answers a paste after a signed-in end as already arrived, and after a failed end as ended', async () => {
    expect(await pasteAfterTheEnd(0)).toMatchObject({ ok: false, arrived: true });
    expect(await pasteAfterTheEnd(4)).toMatchObject({ ok: false, reason: 'the login has already ended' });
  });
});
