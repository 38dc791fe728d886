/**
 * What `login finish` and `login status --json` say about their input
 * and what a person pastes there: a blank argument is "no
 * address given" at once, a bare code for a loopback login is refused with
 * what to paste instead, and --json status writes nothing for a person.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox, waitNoProcesses } from '../helpers/cli.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  if (!sandbox) return;
  await agyctl(['login', 'cancel'], sandbox);
  expect(await waitNoProcesses(sandbox)).toEqual([]);
  sandbox.cleanup();
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
