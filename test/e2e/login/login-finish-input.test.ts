/**
 * What `login finish` and `login status --json` say about their input
 * and what a person pastes there: a blank argument is "no
 * address given" at once, a bare code for a loopback login is refused with
 * what to paste instead, and --json status writes nothing for a person.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseEvents, parseJson, type Sandbox, waitNoProcesses } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  if (!sandbox) return;
  await agyctl(['login', 'cancel'], sandbox);
  expect(await waitNoProcesses(sandbox)).toEqual([]);
  sandbox = undefined;
});

describe('login finish input', () => {
  it('an empty or blank argument is "no address given" (exit 2, usage), without waiting for the login', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    expect((await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)).exitCode).toBe(0);
    for (const arg of ['', '   ']) {
      const r = await agyctl(['login', 'finish', arg, '--json'], sb, { timeoutMs: 10_000 });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(parseJson(r.stdout)).toMatchObject({ ok: false, error: { code: 'usage' } });
      expect(String((parseJson(r.stdout).error as { message: string }).message)).toMatch(/^No address given/);
    }
  });

  it('a bare code for a loopback login says the whole address is needed, not "host 0.0.0.4"', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    expect((await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)).exitCode).toBe(0);
    const r = await agyctl(['login', 'finish', '4/0AbCdEf'], sb);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('bare code');
    expect(r.stderr).toContain('whole address');
    expect(r.stderr).not.toContain('0.0.0.4');
    const help = await agyctl(['login', 'finish', '--help'], sb);
    expect(help.stdout).not.toContain('(or a code)');
  });

  it('reads a paste as the prompt does: a quoted address is delivered; a piece of one says "paste it on one line"', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    expect((await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)).exitCode).toBe(0);
    const status = parseJson((await agyctl(['login', 'status', '--json'], sb)).stdout) as { login: { url: string } };
    const auth = new URL(status.login.url);
    const back = new URL(auth.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', '4/by-hand');
    back.searchParams.set('state', auth.searchParams.get('state')!);
    const piece = await agyctl(['login', 'finish', back.search.slice(3)], sb);
    expect(piece.exitCode, piece.stderr).toBe(2);
    expect(piece.stderr).toContain('piece of an address');
    expect(piece.stderr).toContain('on one line');
    const cut = await agyctl(['login', 'finish', back.href.slice(0, -10)], sb);
    expect(cut.exitCode, cut.stderr).toBe(2);
    expect(cut.stderr).toContain('cut short');
    const quoted = await agyctl(['login', 'finish', `"${back.href}"`], sb);
    expect(quoted.exitCode, quoted.stderr).toBe(0);
    expect(quoted.stdout).toContain('Delivered the redirect');
  });

  it('a redirect the listener answers with HTTP 400 is a failed sign-in (exit 3 with the cause), not "delivered"', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    expect((await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)).exitCode).toBe(0);
    const status = parseJson((await agyctl(['login', 'status', '--json'], sb)).stdout) as { login: { url: string } };
    const auth = new URL(status.login.url);
    const back = new URL(auth.searchParams.get('redirect_uri')!);
    back.searchParams.set('state', auth.searchParams.get('state')!);
    back.searchParams.set('code', '4/by-hand');
    // The server cannot save the token (a directory stands where it goes): its listener answers 400.
    fs.mkdirSync(path.join(sb.stateDir, 'acp_token.json'));
    const r = await agyctl(['login', 'finish', back.href], sb, { timeoutMs: 30_000 });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stdout).not.toContain('Delivered');
    expect(r.stderr).toMatch(/^error: The login listener answered HTTP 400 to the redirect: the sign-in failed: \S/);
    expect(r.stderr).not.toContain('now finishes');
  });

  it('a second login while one is pending: --json error message is one line without the URL (it is in pending.url); people still see the URL', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    expect((await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)).exitCode).toBe(0);
    const r = await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb);
    expect(r.exitCode).toBe(2);
    const err = parseEvents(r.stdout).at(-1) as {
      event: string;
      code: string;
      message: string;
      pending: { url: string };
    };
    expect(err).toMatchObject({ event: 'error', code: 'login-pending' });
    expect(err.message).toMatch(/^A login is pending for /);
    expect(err.message).not.toContain('\n');
    expect(err.message).not.toContain('https://');
    expect(err.pending.url).toMatch(/^https:\/\/accounts\.google\.com\//);
    const human = await agyctl(['login', '--detach', '--timeout', '60s'], sb);
    expect(human.exitCode).toBe(2);
    expect(human.stderr).toContain(`Sign-in URL: ${err.pending.url}`);
    expect(human.stderr).toMatch(/error: A login is pending for /);
  });

  it('status --json writes the document and nothing for a person on stderr', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    expect((await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)).exitCode).toBe(0);
    const r = await agyctl(['login', 'status', '--json'], sb);
    expect(r.exitCode).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ login: { status: 'pending' } });
    expect(r.stderr).toBe('');
  });
});
