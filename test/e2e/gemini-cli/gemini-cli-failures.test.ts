/**
 * agyctl against the REAL gemini-cli (the pinned dev dependency), offline:
 * probe, check, and every way a sign-in fails at the loopback listener. No
 * network is involved: each failure happens before gemini-cli would talk to
 * Google. After each run no process of the sandbox and no shim dir remains.
 *
 * @module-tag gemini-cli
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import { agyctl, parseEvents, parseJson, spawnAgyctl, waitNoProcesses } from '../../helpers/cli.js';
import { GEMINI_VERSION, type GeminiSandbox, makeGeminiSandbox } from '../../helpers/gemini.js';

let sandbox: GeminiSandbox | undefined;

const shimDirsLeft = (sb: GeminiSandbox): string[] =>
  fs.readdirSync(sb.root).filter((n) => n.startsWith('agyctl-login-'));

async function expectNothingLeft(sb: GeminiSandbox): Promise<void> {
  expect(await waitNoProcesses(sb, 10_000)).toEqual([]);
  expect(shimDirsLeft(sb)).toEqual([]);
}

/** Start a login, wait for its url event, play the browser with `request(url)`, and return the finished run. */
async function failedLogin(sb: GeminiSandbox, request: (signInUrl: string) => string) {
  const child = spawnAgyctl(['login', '--json', '--timeout', '60s'], sb, { timeoutMs: 60_000 });
  const url = await waitForEvent(child, 'url', 30_000);
  expect(url.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth2callback$/);
  expect(url.tunnel).toContain(`-L ${String(url.port)}:127.0.0.1:${String(url.port)} `);
  await httpGet(request(String(url.url))).catch(() => 0); // the listener may close before answering
  const result = await child;
  child.stdin?.destroy();
  return { exitCode: result.exitCode, events: parseEvents(String(result.stdout)), stderr: String(result.stderr) };
}

describe('gemini-cli (real package) offline', () => {
  it('probe detects gemini-cli from initialize and reports its auth methods', async () => {
    sandbox = makeGeminiSandbox();
    const result = await agyctl(['probe', '--json'], sandbox, { timeoutMs: 60_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    const probe = parseJson(result.stdout).probe as Record<string, unknown>;
    expect(probe.profile).toBe('gemini-cli');
    expect(probe.agent).toMatchObject({ name: 'gemini-cli', version: GEMINI_VERSION });
    expect(probe.authMethods).toContain('oauth-personal');
    await expectNothingLeft(sandbox);
  });

  it('a wrapper command is corrected by agentInfo.name: probe says gemini-cli', async () => {
    sandbox = makeGeminiSandbox();
    const wrapper = path.join(sandbox.root, 'my-agent');
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${sandbox.env.AGYCTL_SERVER} "$@"\n`, { mode: 0o755 });
    const result = await agyctl(['probe', '--json', '--server', wrapper], sandbox, { timeoutMs: 60_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    expect((parseJson(result.stdout).probe as Record<string, unknown>).profile).toBe('gemini-cli');
    expect(result.stderr).toContain('using the gemini-cli profile');
    await expectNothingLeft(sandbox);
  });

  it('check on a fresh state: settings name no auth type, exit 3 not-authenticated, live agrees', async () => {
    sandbox = makeGeminiSandbox();
    const result = await agyctl(['check', '--live', '--json', '--profile', 'gemini-cli'], sandbox, {
      timeoutMs: 60_000,
    });
    expect(result.exitCode, result.stderr).toBe(3);
    const doc = parseJson(result.stdout);
    expect(doc.status).toBe('not-authenticated');
    const checks = doc.checks as Array<{ id: string; ok: boolean; message: string }>;
    expect(checks.find((c) => c.id === 'settings')?.message).toContain('security.auth.selectedType');
    expect(checks.find((c) => c.id === 'live')).toMatchObject({ ok: false });
    expect(checks.some((c) => c.id === 'conversations')).toBe(false);
    await expectNothingLeft(sandbox);
  });

  it('check --live with oauth-personal selected but no credentials: the sign-in gemini-cli starts is cut short, exit 3', async () => {
    sandbox = makeGeminiSandbox({ DISPLAY: ':99' }); // a desktop: the guard must keep it from opening a browser
    sandbox.writeGeminiSettings({ security: { auth: { selectedType: 'oauth-personal' } } });
    const started = Date.now();
    const result = await agyctl(['check', '--live', '--json'], sandbox, { timeoutMs: 60_000 });
    expect(result.exitCode, result.stderr).toBe(3);
    const checks = parseJson(result.stdout).checks as Array<{ id: string; ok: boolean; message: string }>;
    expect(checks.find((c) => c.id === 'token-file')).toMatchObject({ ok: false });
    expect(checks.find((c) => c.id === 'live')?.message).toContain('started an interactive sign-in');
    expect(Date.now() - started).toBeLessThan(30_000); // not gemini-cli's five-minute sign-in window
    await expectNothingLeft(sandbox);
  });

  it('backup, restore, sessions and settings refuse the gemini-cli profile with exit 2', async () => {
    sandbox = makeGeminiSandbox();
    for (const args of [['sessions'], ['backup'], ['restore', 'latest'], ['settings', 'set-auth', 'oauth-personal']]) {
      const result = await agyctl([...args, '--profile', 'gemini-cli'], sandbox);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('does not apply to the gemini-cli profile');
    }
  });

  it('a stray GET / on the callback port ends the sign-in: exit 3 with the server message, nothing left', async () => {
    sandbox = makeGeminiSandbox();
    const run = await failedLogin(
      sandbox,
      (u) => `http://127.0.0.1:${new URL(new URL(u).searchParams.get('redirect_uri')!).port}/`,
    );
    expect(run.exitCode, run.stderr).toBe(3);
    const error = run.events.at(-1)!;
    expect(error).toMatchObject({ event: 'error', code: 'auth-failed', exit: 3 });
    expect(String(error.message)).toContain('Unexpected request: /');
    await expectNothingLeft(sandbox);
  });

  it('error=access_denied from Google: exit 3 naming it', async () => {
    sandbox = makeGeminiSandbox();
    const run = await failedLogin(sandbox, (u) => {
      const r = new URL(redirectFor(u, { code: null }));
      r.searchParams.set('error', 'access_denied');
      return r.toString();
    });
    expect(run.exitCode, run.stderr).toBe(3);
    expect(String(run.events.at(-1)!.message)).toContain('access_denied');
    await expectNothingLeft(sandbox);
  });

  it('a redirect with the wrong state: exit 3 with the state-mismatch message', async () => {
    sandbox = makeGeminiSandbox();
    const run = await failedLogin(sandbox, (u) => redirectFor(u, { state: 'not-the-state' }));
    expect(run.exitCode, run.stderr).toBe(3);
    expect(String(run.events.at(-1)!.message)).toContain('state mismatch');
    await expectNothingLeft(sandbox);
  });

  it('the deadline while gemini-cli waits for the browser: exit 5, and its process group is gone at once', async () => {
    sandbox = makeGeminiSandbox();
    const child = spawnAgyctl(['login', '--json', '--timeout', '3s'], sandbox, { timeoutMs: 60_000 });
    await waitForEvent(child, 'url', 30_000);
    const urlAt = Date.now();
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(5);
    // gemini-cli ignores stdin EOF during a sign-in and its launcher ignores SIGTERM: the group stop must still be quick.
    expect(Date.now() - urlAt).toBeLessThan(3_000 + 4_000);
    await expectNothingLeft(sandbox);
  });

  it('Ctrl-C while gemini-cli waits for the browser: exit 130, nothing left', async () => {
    sandbox = makeGeminiSandbox();
    const child = spawnAgyctl(['login', '--json', '--timeout', '60s'], sandbox, { timeoutMs: 60_000 });
    await waitForEvent(child, 'url', 30_000);
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    await expectNothingLeft(sandbox);
  });

  it('the re-login case (oauth-personal selected, no credentials): the sign-in gemini-cli starts before initialize is shown, and its failure is exit 3', async () => {
    sandbox = makeGeminiSandbox();
    sandbox.writeGeminiSettings({ security: { auth: { selectedType: 'oauth-personal' } } });
    const run = await failedLogin(sandbox, (u) => redirectFor(u, { state: 'not-the-state' }));
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.events.map((e) => e.event)).toContain('server-started'); // initialize was sent again, and answered
    expect(String(run.events.at(-1)!.message)).toContain('state mismatch');
    await expectNothingLeft(sandbox);
  });
});
