/**
 * The success path against the REAL gemini-cli, offline: Google is played
 * by a loopback HTTPS proxy (test/helpers/fake-google.ts) that the server
 * reaches through HTTPS_PROXY and trusts through NODE_EXTRA_CA_CERTS with a
 * CA made for this run. The test plays the user's browser by requesting the
 * redirect with the code and state, or by pasting the code in the
 * code-entry flow. Then `check --live` passes in a fresh server process.
 *
 * @module-tag gemini-cli
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import { agyctl, parseEvents, parseJson, spawnAgyctl, waitNoProcesses } from '../../helpers/cli.js';
import { FAKE, useFakeGoogle } from '../../helpers/fake-google.js';
import { type GeminiSandbox, makeGeminiSandbox } from '../../helpers/gemini.js';

const google = useFakeGoogle();
let sandbox: GeminiSandbox | undefined;

function onlineSandbox(): GeminiSandbox {
  return makeGeminiSandbox({ HTTPS_PROXY: google().proxyUrl, NODE_EXTRA_CA_CERTS: google().caFile });
}

const SECRETS = [FAKE.code, FAKE.accessToken, FAKE.refreshToken];

function expectNoSecrets(...texts: string[]): void {
  for (const t of texts) for (const s of SECRETS) expect(t.includes(s), `a secret leaked: ${s}`).toBe(false);
}

/** What gemini-cli registered for agyctl's probe directories must be gone after every run. */
function probeLeftovers(sb: GeminiSandbox): string[] {
  const left: string[] = [];
  for (const base of ['tmp', 'history']) {
    const dir = path.join(sb.geminiDir, base);
    for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const marker = path.join(dir, name, '.project_root');
      if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').includes('agyctl-probe-'))
        left.push(path.join(base, name));
    }
  }
  const registry = path.join(sb.geminiDir, 'projects.json');
  if (fs.existsSync(registry) && fs.readFileSync(registry, 'utf8').includes('agyctl-probe-'))
    left.push('projects.json');
  return left;
}

async function loginPlayingBrowser(sb: GeminiSandbox, args: string[] = []) {
  const child = spawnAgyctl(['login', '--json', '--profile', 'gemini-cli', '--timeout', '90s', ...args], sb, {
    timeoutMs: 120_000,
  });
  const url = await waitForEvent(child, 'url', 60_000);
  const status = await httpGet(redirectFor(String(url.url), { code: FAKE.code }));
  expect(status).toBe(301); // gemini-cli sends the browser on to its success page
  const result = await child;
  child.stdin?.destroy();
  return {
    exitCode: result.exitCode,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
    events: parseEvents(String(result.stdout)),
  };
}

async function expectLiveCheckPasses(sb: GeminiSandbox): Promise<void> {
  const check = await agyctl(['check', '--live', '--json', '--profile', 'gemini-cli'], sb, { timeoutMs: 90_000 });
  expect(check.exitCode, check.stdout + check.stderr).toBe(0);
  const doc = parseJson(check.stdout);
  expect(doc.status).toBe('ok');
  const checks = doc.checks as Array<{ id: string; ok: boolean }>;
  expect(checks.filter((c) => c.id === 'token-file' || c.id === 'live').every((c) => c.ok)).toBe(true);
  expectNoSecrets(check.stdout, check.stderr);
}

describe('gemini-cli (real package) sign-in against a fake Google', () => {
  it('login completes through the browser flow, the token file is 0600, and check --live passes in a fresh server', async () => {
    sandbox = onlineSandbox();
    const run = await loginPlayingBrowser(sandbox);
    expect(run.exitCode, run.stderr).toBe(0);
    const kinds = run.events.map((e) => e.event);
    expect(kinds).toEqual(expect.arrayContaining(['server-started', 'url', 'authenticated', 'verified']));
    // The account gemini-cli records in google_accounts.json after the sign-in, read locally.
    const account = { label: 'Google account', email: 'someone@example.com', source: 'google_accounts.json' };
    expect(run.events.find((e) => e.event === 'verified')).toMatchObject({
      tokenFile: { mode: '0600' },
      sessionProbe: { removed: true },
      account,
    });
    const status = await agyctl(['login', 'status', '--json', '--profile', 'gemini-cli'], sandbox);
    expect(parseJson(status.stdout).login).toMatchObject({ status: 'succeeded', account });
    expect(fs.statSync(sandbox.tokenFile).mode & 0o777).toBe(0o600);
    // gemini-cli records the method itself; agyctl reports that rather than writing it.
    expect(JSON.parse(fs.readFileSync(sandbox.settingsFile, 'utf8'))).toMatchObject({
      security: { auth: { selectedType: 'oauth-personal' } },
      telemetry: { enabled: false },
    });
    expectNoSecrets(run.stdout, run.stderr);
    const served = google().requests.map((r) => `${r.method} ${r.host}${r.path}`);
    expect(served).toEqual(
      expect.arrayContaining([
        'POST oauth2.googleapis.com/token',
        'POST cloudcode-pa.googleapis.com/v1internal:loadCodeAssist',
      ]),
    );
    await expectLiveCheckPasses(sandbox);
    expect(google().refused).toEqual([]); // telemetry and update checks stayed off: no other host was asked for
    expect(probeLeftovers(sandbox)).toEqual([]);
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 180_000);

  it('code entry (no display): the URL is shown, the pasted code goes raw to the server, and nowhere else', async () => {
    sandbox = onlineSandbox();
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const child = spawnAgyctl(
      [
        'login',
        '--json',
        '--profile',
        'gemini-cli',
        '--no-fake-display',
        '--timeout',
        '90s',
        '--verbose',
        '--trace',
        trace,
      ],
      sandbox,
      { timeoutMs: 120_000 },
    );
    const url = await waitForEvent(child, 'url', 60_000);
    expect(url).toMatchObject({ mode: 'code-entry', redirectUri: 'https://codeassist.google.com/authcode' });
    expect(url.tunnel).toBeUndefined();
    child.stdin!.write(`${FAKE.code}\n`);
    const result = await child;
    child.stdin?.destroy();
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const events = parseEvents(String(result.stdout));
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['code-sent', 'authenticated', 'verified']));
    expect(fs.statSync(sandbox.tokenFile).mode & 0o777).toBe(0o600);
    expectNoSecrets(String(result.stdout), String(result.stderr), fs.readFileSync(trace, 'utf8'));
    // The server's line reader echoed the code onto stdout; --verbose and the trace show it scrubbed.
    expect(String(result.stderr)).toMatch(/authorization code: \[REDACTED\]/);
    expect(fs.readFileSync(trace, 'utf8')).toContain('[REDACTED]');
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 180_000);

  it('a code the server cannot use: it starts over with a new URL, which agyctl shows; the right code then works', async () => {
    sandbox = onlineSandbox();
    const child = spawnAgyctl(
      ['login', '--json', '--profile', 'gemini-cli', '--no-fake-display', '--timeout', '90s'],
      sandbox,
      { timeoutMs: 120_000 },
    );
    const first = await waitForEvent(child, 'url', 60_000);
    const second = waitForEvent(child, 'url', 60_000).catch(() => undefined);
    child.stdin!.write('4/not-the-right-code\n');
    // waitForEvent resolves on the first url event it sees from now on: the retry's.
    const retry = await second;
    expect(retry?.mode).toBe('code-entry');
    expect(retry?.url).not.toBe(first.url);
    child.stdin!.write(`${FAKE.code}\n`);
    const result = await child;
    child.stdin?.destroy();
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 180_000);

  it('re-login after the credentials are gone: gemini-cli signs in at start-up, agyctl shows that URL and completes', async () => {
    sandbox = onlineSandbox();
    expect((await loginPlayingBrowser(sandbox)).exitCode).toBe(0);
    fs.rmSync(sandbox.tokenFile);
    const stale = await agyctl(['check', '--live', '--json'], sandbox, { timeoutMs: 60_000 });
    expect(stale.exitCode).toBe(3);
    const again = await loginPlayingBrowser(sandbox, ['--verbose']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain('started a sign-in before answering initialize');
    expect(again.events.findIndex((e) => e.event === 'url')).toBeLessThan(
      again.events.findIndex((e) => e.event === 'server-started'),
    );
    expect(fs.statSync(sandbox.tokenFile).mode & 0o777).toBe(0o600);
    await expectLiveCheckPasses(sandbox);
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 180_000);

  it('logout removes oauth_creds.json and a fresh server confirms it is logged out', async () => {
    sandbox = onlineSandbox();
    expect((await loginPlayingBrowser(sandbox)).exitCode).toBe(0);
    const out = await agyctl(['logout', '--json', '--profile', 'gemini-cli'], sandbox, { timeoutMs: 90_000 });
    expect(out.exitCode, out.stderr).toBe(0);
    expect(parseJson(out.stdout).logout).toMatchObject({ via: 'local', tokenRemoved: true, confirmed: true });
    expect(fs.existsSync(sandbox.tokenFile)).toBe(false);
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 180_000);
});
