/**
 * A login that outlives its terminal, against the simulator on the built
 * binary: --detach, then the redirect from another process (login finish),
 * status --wait, cancel, the deadline, a killed supervisor, one pending
 * login per state dir, and SIGHUP handing an attached login over. Leftovers
 * are checked on this sandbox's processes only (its HOME), its shim dirs
 * and the login's listener port.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listenerAlive } from '../../../src/login/startup.js';
import { redirectFor, waitForEvent } from '../../helpers/browser.js';
import {
  agyctl,
  makeSandbox,
  parseEvents,
  parseJson,
  processesOf,
  type Sandbox,
  spawnAgyctl,
  waitNoProcesses,
} from '../../helpers/cli.js';
import { EventStream } from '../../helpers/ndjson.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  if (sandbox) {
    // Whatever a failed test left: stop the pending login before removing its HOME.
    await agyctl(['login', 'cancel'], sandbox);
  }
  sandbox = undefined;
});

const shimDirsLeft = (sb: Sandbox): string[] => fs.readdirSync(sb.root).filter((f) => f.startsWith('agyctl-login-'));
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function detach(sb: Sandbox, extra: string[] = []): Promise<Record<string, unknown>> {
  const result = await agyctl(['login', '--detach', '--json', '--timeout', '60s', ...extra], sb);
  expect(result.exitCode, result.stderr).toBe(0);
  const events = parseEvents(result.stdout);
  expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['server-started', 'url', 'detached']));
  return events.find((e) => e.event === 'detached')!;
}

async function status(
  sb: Sandbox,
  extra: string[] = [],
): Promise<{ exitCode: number; login: Record<string, unknown> }> {
  const r = await agyctl(['login', 'status', '--json', ...extra], sb, { timeoutMs: 90_000 });
  return { exitCode: r.exitCode, login: parseJson(r.stdout).login as Record<string, unknown> };
}

async function expectClean(sb: Sandbox, port: number): Promise<void> {
  expect(await waitNoProcesses(sb)).toEqual([]);
  expect(shimDirsLeft(sb)).toEqual([]);
  expect(await listenerAlive(port)).toBe(false);
}

describe('login --detach', () => {
  it('returns at once with a detached event; login finish from another process delivers; status --wait exits 0 after the proof', async () => {
    sandbox = makeSandbox();
    const d = await detach(sandbox);
    expect(d).toMatchObject({
      event: 'detached',
      id: expect.any(String),
      url: expect.stringMatching(/^https:\/\/accounts\.google\.com\//),
      port: expect.any(Number),
      tunnel: expect.stringMatching(/^ssh -N -L /),
    });
    expect(Date.parse(String(d.deadline))).toBeGreaterThan(Date.now());
    // The login lives on without any agyctl in the foreground.
    const pending = await status(sandbox);
    expect(pending.exitCode).toBe(0);
    expect(pending.login).toMatchObject({
      status: 'pending',
      phase: 'waiting',
      port: d.port,
      url: d.url,
      tunnel: d.tunnel,
    });
    expect(await listenerAlive(Number(d.port))).toBe(true);

    const wrong = await agyctl(['login', 'finish', '--json'], sandbox, {
      input: `${redirectFor(String(d.url), { state: 'not-the-state' })}\n`,
    });
    expect(wrong.exitCode).toBe(2);
    expect(parseJson(wrong.stdout).error).toMatchObject({
      code: 'redirect-rejected',
      message: expect.stringMatching(/state/),
    });

    const finish = await agyctl(['login', 'finish', '--json'], sandbox, { input: `${redirectFor(String(d.url))}\n` });
    expect(finish.exitCode, finish.stderr).toBe(0);
    expect(parseJson(finish.stdout)).toMatchObject({ ok: true, delivered: true, httpStatus: 200 });
    // One delivery: a second one is not delivered. Before the server answers it is refused as already delivered;
    // once the sign-in is in, it is "already arrived" (exit 0, nothing delivered); once the proof is done too and
    // the supervisor gone, there is no login left to give it to (and the last one succeeded).
    const again = await agyctl(['login', 'finish', '--json', redirectFor(String(d.url))], sandbox);
    const answer = parseJson(again.stdout);
    if (again.exitCode === 0) expect(answer).toMatchObject({ ok: true, delivered: false, alreadySignedIn: true });
    else {
      expect(again.exitCode).toBe(2);
      const error = answer.error as { code: string; message: string };
      expect([
        { code: 'redirect-rejected', already: /already/.test(error.message) },
        { code: 'no-pending-login', already: /ended with exit 0/.test(error.message) },
      ]).toContainEqual({ code: error.code, already: true });
    }

    const done = await status(sandbox, ['--wait']);
    expect(done.exitCode).toBe(0);
    expect(done.login).toMatchObject({ status: 'succeeded', method: 'oauth-personal', outcome: { exit: 0 } });
    // The proof ran: the token file is checked and settings.json names the auth type.
    expect(fs.statSync(path.join(sandbox.stateDir, 'acp_token.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(path.join(sandbox.stateDir, 'settings.json'), 'utf8'))).toEqual({
      auth: { type: 'oauth-personal' },
    });
    await expectClean(sandbox, Number(d.port));
  });

  it('in human mode the no-tunnel hint sends the address to `login finish`, not to this command (which returns)', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['login', '--detach', '--timeout', '60s'], sandbox);
    expect(result.exitCode, result.stderr).toBe(0);
    const text = result.stdout + result.stderr;
    expect(text).toMatch(/No tunnel\? .*copy that address and give it to `agyctl login finish`\./);
    expect(text).not.toMatch(/paste it here/i);
    expect(text).toMatch(/The login goes on in the background/);
  });

  it('the record is private and holds neither the code nor the token', async () => {
    sandbox = makeSandbox({ XDG_STATE_HOME: '' });
    const d = await detach(sandbox);
    const base = path.join(sandbox.home, '.local', 'state', 'agyctl', 'logins');
    const [dir] = fs.readdirSync(base);
    const record = path.join(base, dir!);
    expect(fs.statSync(record).mode & 0o777).toBe(0o700);
    for (const f of fs.readdirSync(record)) {
      const st = fs.statSync(path.join(record, f));
      if (st.isFile()) expect(`${f} ${(st.mode & 0o777).toString(8)}`).toBe(`${f} 600`);
    }
    const finish = await agyctl(['login', 'finish'], sandbox, { input: `${redirectFor(String(d.url))}\n` });
    expect(finish.exitCode, finish.stderr).toBe(0);
    expect((await status(sandbox, ['--wait'])).exitCode).toBe(0);
    const everything = fs
      .readdirSync(record)
      .filter((f) => fs.statSync(path.join(record, f)).isFile())
      .map((f) => fs.readFileSync(path.join(record, f), 'utf8'))
      .join('\n');
    expect(everything).not.toContain('4/0AfJohXm-FAKE-AUTH-CODE');
    expect(everything).not.toContain('ya29.');
  });

  it('cancel stops it: no process, no listener, no shim dir; status then reports it cancelled', async () => {
    sandbox = makeSandbox({ AGY_SIM_IGNORE_SIGTERM: '1' });
    const d = await detach(sandbox);
    expect(processesOf(sandbox).length).toBeGreaterThan(0);
    const r = await agyctl(['login', 'cancel'], sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('Cancelled the login');
    await expectClean(sandbox, Number(d.port));
    const after = await status(sandbox);
    expect(after.login).toMatchObject({ status: 'cancelled', outcome: { exit: 130, code: 'login-cancelled' } });
    expect((await status(sandbox, ['--wait'])).exitCode).toBe(130);
    const human = await agyctl(['login', 'status'], sandbox);
    expect(human.stdout).toMatch(/was cancelled/);
    expect(human.stdout).not.toMatch(/failed|interrupted/);
  });

  it('the deadline still holds: the supervisor stops the server and status --wait exits 5', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['login', '--detach', '--json', '--timeout', '3s'], sandbox);
    expect(result.exitCode, result.stderr).toBe(0);
    const port = Number(parseEvents(result.stdout).find((e) => e.event === 'detached')!.port);
    const done = await status(sandbox, ['--wait']);
    expect(done.exitCode).toBe(5);
    expect(done.login).toMatchObject({ status: 'failed', outcome: { exit: 5, code: 'timeout' } });
    await expectClean(sandbox, port);
  });

  it('a killed supervisor is reported as died and cleaned up (its server too), not left pending', async () => {
    sandbox = makeSandbox();
    const d = await detach(sandbox);
    const pid = Number(d.pid);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    const seen = await status(sandbox);
    expect(seen.login).toMatchObject({ status: 'died', outcome: { exit: 4, code: 'login-supervisor-died' } });
    await expectClean(sandbox, Number(d.port));
    expect((await status(sandbox, ['--wait'])).exitCode).toBe(4);
    // Not pending any more: a new login starts.
    const next = await detach(sandbox);
    expect(next.id).not.toBe(d.id);
  });

  it('one pending login per state dir: a second login shows the pending URL and tunnel; --restart starts over', async () => {
    sandbox = makeSandbox();
    const d = await detach(sandbox);
    const second = await agyctl(['login', '--timeout', '60s'], sandbox);
    expect(second.exitCode).toBe(2);
    expect(second.stderr).toContain('A login is pending');
    expect(second.stderr).toContain(String(d.url));
    expect(second.stderr).toContain(String(d.tunnel));
    expect(second.stderr).toContain('--restart');
    const again = await detach(sandbox, ['--restart']);
    expect(again.id).not.toBe(d.id);
    expect(processesOf(sandbox)).not.toContain(Number(d.pid));
    expect((await status(sandbox)).login).toMatchObject({ status: 'pending', id: again.id });
  });
});

describe('two logins started at the same moment', () => {
  it('exactly one runs; the other says one is pending (exit 2)', async () => {
    sandbox = makeSandbox();
    const sb = sandbox;
    const both = await Promise.all([0, 1].map(() => agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)));
    expect(both.map((r) => r.exitCode).sort()).toEqual([0, 2]);
    const loser = both.find((r) => r.exitCode === 2)!;
    expect(parseEvents(loser.stdout).at(-1)).toMatchObject({ event: 'error', code: 'login-pending' });
    const supervisors = processesOf(sb).filter((pid) =>
      fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('__login-supervisor'),
    );
    expect(supervisors).toHaveLength(1);
  });
});

describe('a dropped terminal (SIGHUP) hands the login over', () => {
  it('SIGHUP: the foreground agyctl leaves, the login stays pending on the same port and finishes later', async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '--json', '--timeout', '60s'], sandbox);
    const events = new EventStream(child.stdout!);
    await events.waitFor('waiting', 20_000);
    const first = events.find('url')!;
    child.kill('SIGHUP');
    const result = await child;
    expect(result.exitCode).toBe(0);
    const seen = await status(sandbox);
    expect(seen.login).toMatchObject({ status: 'pending', port: first.port });
    // The next agyctl command reminds the user, on stderr only.
    const other = await agyctl(['settings', 'show', '--json'], sandbox);
    expect(other.stderr).toContain('a login is pending');
    expect(() => parseJson(other.stdout)).not.toThrow();
    const finish = await agyctl(['login', 'finish'], sandbox, { input: `${redirectFor(String(first.url))}\n` });
    expect(finish.exitCode, finish.stderr).toBe(0);
    expect((await status(sandbox, ['--wait'])).exitCode).toBe(0);
    await expectClean(sandbox, Number(first.port));
  });

  it('SIGTERM still cancels with 130 and leaves nothing', async () => {
    sandbox = makeSandbox({ AGY_SIM_IGNORE_SIGTERM: '1' });
    const child = spawnAgyctl(['login', '--json', '--timeout', '60s'], sandbox);
    const url = await waitForEvent(child, 'url');
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(130);
    await expectClean(sandbox, Number(url.port));
    expect((await status(sandbox)).login).toMatchObject({
      status: 'cancelled',
      outcome: { exit: 130, code: 'login-cancelled' },
    });
  });
});
