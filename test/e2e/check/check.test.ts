/**
 * `agyctl check` end to end: the built binary against the simulator. Every
 * case runs twice, human and --json, and the exit codes must agree.
 */

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MISSING_SETTINGS_HINT } from '../../../src/settings/validate.js';
import { httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import {
  agyctl,
  parseJson,
  processesOf,
  type RunResult,
  type Sandbox,
  spawnAgyctl,
  writeSettings,
} from '../../helpers/cli.js';
import { parseExposition } from '../../helpers/exposition.js';
import { useFreshSandbox } from '../../helpers/fresh-sandbox.js';
import { loginViaSim } from '../../helpers/sim-login.js';

interface Check {
  id: string;
  ok: boolean;
  severity: string;
  message: string;
  hint?: string;
  ms: number;
}

interface Both {
  human: RunResult;
  json: RunResult;
  doc: { ok: boolean; status: string; checks: Check[]; token?: Record<string, unknown> };
}

const fresh = useFreshSandbox();

async function loggedIn(): Promise<Sandbox> {
  const sb = fresh();
  await loginViaSim(sb);
  return sb;
}

/** Human and --json runs of the same check; their exit codes must be equal. */
async function both(sb: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Both> {
  const human = await agyctl(['check', ...args], sb, { env });
  const json = await agyctl(['check', '--json', ...args], sb, { env });
  expect(json.exitCode, `human:\n${human.stdout}${human.stderr}\njson:\n${json.stdout}${json.stderr}`).toBe(
    human.exitCode,
  );
  const doc = parseJson(json.stdout) as unknown as Both['doc'];
  expect(doc.ok).toBe(json.exitCode === 0);
  return { human, json, doc };
}

const byId = (doc: Both['doc'], id: string): Check | undefined => doc.checks.find((c) => c.id === id);

/** Nothing of the probe sessions may remain: no conversation files, no probe cwd. */
function expectNoProbeLeftovers(sb: Sandbox): void {
  const conv = path.join(sb.stateDir, 'conversations');
  expect(fs.existsSync(conv) ? fs.readdirSync(conv) : []).toEqual([]);
  expect(fs.readdirSync(sb.root).filter((n) => n.startsWith('agyctl-probe-'))).toEqual([]);
}

describe('agyctl check (static)', () => {
  it('fresh state: not-authenticated, exit 3, the fix is login', async () => {
    const sb = fresh();
    const { human, doc } = await both(sb, []);
    expect(human.exitCode).toBe(3);
    expect(doc.status).toBe('not-authenticated');
    expect(byId(doc, 'settings')).toMatchObject({ ok: false, severity: 'error', hint: MISSING_SETTINGS_HINT });
    expect(human.stdout).toMatch(/✗ settings/);
    expect(human.stdout).toMatch(/fix: run: agyctl login/);
    // `settings show` gives the same fix for the same missing file.
    const show = await agyctl(['settings', 'show', '--json'], sb);
    expect(JSON.stringify(parseJson(show.stdout))).toContain(JSON.stringify(MISSING_SETTINGS_HINT));
    expect(human.stdout).toMatch(/status: not-authenticated \(exit 3\)/);
    for (const c of doc.checks)
      expect(Object.keys(c).sort()).toEqual(expect.arrayContaining(['id', 'message', 'ms', 'ok', 'severity']));
  });

  it('after a login through the OAuth flow: exit 0, token insight without values', async () => {
    const sb = await loggedIn();
    const token = fs.readFileSync(path.join(sb.stateDir, 'acp_token.json'), 'utf8');
    const { human, json, doc } = await both(sb, []);
    expect(human.exitCode).toBe(0);
    expect(doc.status).toBe('ok');
    expect(doc.token).toMatchObject({ mode: '0600', modeOk: true, refreshToken: true });
    expect(doc.token!.expiresInS).toBeGreaterThan(3000);
    for (const value of Object.values(JSON.parse(token) as Record<string, unknown>)) {
      if (typeof value === 'string' && value.length > 20) {
        expect(json.stdout).not.toContain(value);
        expect(human.stdout + human.stderr).not.toContain(value);
      }
    }
  });

  it('an access token that expired with no refresh token cannot work: reauth-required, exit 3; passing checks say result pass', async () => {
    const sb = await loggedIn();
    const file = path.join(sb.stateDir, 'acp_token.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ access_token: 'ya29.dead', token_type: 'Bearer', expiry_date: Date.now() - 3_600_000 }),
    );
    const { human, doc } = await both(sb, []);
    expect(human.exitCode).toBe(3);
    expect(doc.status).toBe('reauth-required');
    expect(byId(doc, 'token')).toMatchObject({
      ok: false,
      severity: 'error',
      result: 'fail',
      hint: 'run: agyctl login (sign in again)',
    });
    expect(human.stdout).toMatch(/status: reauth-required \(exit 3\)/);
    expect(byId(doc, 'settings')).toMatchObject({ ok: true, result: 'pass' });
    // Fields agyctl does not know stay unknown: no finding.
    fs.writeFileSync(
      file,
      JSON.stringify({ credential: { bearer: 'x', expiresAt: new Date(Date.now() - 3_600_000).toISOString() } }),
    );
    const unknown = await both(sb, []);
    expect(unknown.human.exitCode).toBe(0);
    expect(byId(unknown.doc, 'token')).toMatchObject({ ok: true, result: 'pass' });
  });

  it('token file at 0644: exit 6, the hint names the chmod', async () => {
    const sb = await loggedIn();
    const file = path.join(sb.stateDir, 'acp_token.json');
    fs.chmodSync(file, 0o644);
    const { human, doc } = await both(sb, []);
    expect(human.exitCode).toBe(6);
    expect(doc.status).toBe('misconfigured');
    expect(byId(doc, 'token-file')!.hint).toBe(`run: chmod 600 ${file}`);
    expect(human.stdout).toContain(`fix: run: chmod 600 ${file}`);
  });

  it('server missing: exit 4', async () => {
    const sb = await loggedIn();
    const { human, doc } = await both(sb, ['--live'], { AGYCTL_SERVER: path.join(sb.root, 'no-such-server') });
    expect(human.exitCode).toBe(4);
    expect(doc.status).toBe('server-error');
    expect(byId(doc, 'server-command')!.ok).toBe(false);
    expect(byId(doc, 'live')).toBeUndefined();
  });

  it('settings that are not JSON: misconfigured, exit 6, the file untouched', async () => {
    const sb = fresh();
    const file = writeSettings(sb, '{"auth": {"type": "oauth-personal"');
    const { human, doc } = await both(sb, []);
    expect(human.exitCode).toBe(6);
    expect(byId(doc, 'settings')).toMatchObject({ ok: false });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"auth": {"type": "oauth-personal"');
  });

  it('gemini-api-key: the variable must be set here (exit 3), and then the server accepts it (exit 0)', async () => {
    const sb = fresh();
    writeSettings(sb, { auth: { type: 'gemini-api-key' } });
    const missing = await both(sb, []);
    expect(missing.human.exitCode).toBe(3);
    expect(byId(missing.doc, 'env')!.message).toMatch(/GEMINI_API_KEY/);
    const secret = 'AIza-bench-secret-value-0123456789';
    const present = await both(sb, ['--live'], { GEMINI_API_KEY: secret });
    expect(present.human.exitCode, present.human.stdout).toBe(0);
    expect(present.json.stdout + present.human.stdout).not.toContain(secret);
    expectNoProbeLeftovers(sb);
  });

  it('bad flags: exit 2', async () => {
    const sb = fresh();
    expect((await agyctl(['check', '--timeout', 'soon'], sb)).exitCode).toBe(2);
    expect((await agyctl(['check', '--model', 'gemini-3.8-flash-low'], sb)).exitCode).toBe(2);
    expect((await agyctl(['check', '--prometheus', path.join(sb.root, 'missing-dir', 'x.prom')], sb)).exitCode).toBe(2);
  });
});

describe('agyctl check --live', () => {
  it('fresh state: not-authenticated from the server too', async () => {
    const sb = fresh();
    const { human, doc } = await both(sb, ['--live']);
    expect(human.exitCode).toBe(3);
    expect(byId(doc, 'live')).toMatchObject({ ok: false });
    expect(byId(doc, 'live')!.message).toMatch(/Authentication required/);
    expectNoProbeLeftovers(sb);
  });

  it('logged in: exit 0, and no probe conversation remains', async () => {
    const sb = await loggedIn();
    const { human, doc } = await both(sb, ['--live']);
    expect(human.exitCode).toBe(0);
    expect(byId(doc, 'live')!.ok).toBe(true);
    expectNoProbeLeftovers(sb);
  });

  it('token deleted after login: exit 3', async () => {
    const sb = await loggedIn();
    fs.rmSync(path.join(sb.stateDir, 'acp_token.json'));
    const { human, doc } = await both(sb, ['--live']);
    expect(human.exitCode).toBe(3);
    expect(doc.status).toBe('not-authenticated');
    expect(byId(doc, 'live')).toMatchObject({ ok: false, hint: 'run: agyctl login' });
    expectNoProbeLeftovers(sb);
  });

  it('revoked credential: reauth-required, exit 3', async () => {
    const sb = await loggedIn();
    const { human, doc } = await both(sb, ['--live'], { AGY_SIM_TOKEN_STATE: 'revoked' });
    expect(human.exitCode).toBe(3);
    expect(doc.status).toBe('reauth-required');
    expect(byId(doc, 'live')!.message).toMatch(/invalid_grant/);
    expectNoProbeLeftovers(sb);
  });

  it('server slower than --timeout: exit 5 within the deadline', async () => {
    const sb = await loggedIn();
    const started = Date.now();
    const { human, doc } = await both(sb, ['--live', '--timeout', '1s'], { AGY_SIM_STARTUP_MS: '8000' });
    expect(Date.now() - started).toBeLessThan(2 * 6000);
    expect(human.exitCode).toBe(5);
    expect(doc.status).toBe('timeout');
    expect(byId(doc, 'live')!.message).toMatch(/--timeout 1s/);
    expectNoProbeLeftovers(sb);
  });

  it('server that dies at start: exit 4', async () => {
    const sb = await loggedIn();
    const { human, doc } = await both(sb, ['--live'], { AGY_SIM_EXIT_AT_START: '1' });
    expect(human.exitCode).toBe(4);
    expect(doc.status).toBe('server-error');
  });
});

describe('agyctl check --restart / --prompt', () => {
  it('passes on a logged-in state, with the prompt replayed by the second server', async () => {
    const sb = await loggedIn();
    const { human, doc } = await both(sb, ['--restart', '--prompt', '--model', 'gemini-3.8-flash-low']);
    expect(human.exitCode, human.stdout).toBe(0);
    expect(byId(doc, 'prompt')).toMatchObject({ ok: true });
    expect(byId(doc, 'restart')!.message).toMatch(
      /replayed [1-9]\d* user and [1-9]\d* agent chunks; model gemini-3.8-flash-low re-applied/,
    );
    expectNoProbeLeftovers(sb);
  });

  it('fails naming the step when the server forgets sessions', async () => {
    const sb = await loggedIn();
    const { human, doc } = await both(sb, ['--restart'], { AGY_SIM_FORGET_SESSIONS: '1' });
    expect(human.exitCode).toBe(4);
    expect(byId(doc, 'live')!.ok).toBe(true);
    expect(byId(doc, 'restart')).toMatchObject({ ok: false });
    expect(byId(doc, 'restart')!.message).toMatch(/^restart failed at session\/load/);
    expect(human.stdout).toMatch(/✗ restart +restart failed at session\/load/);
    expectNoProbeLeftovers(sb);
  });

  it('refuses a --model the server does not offer (exit 2) and leaves nothing behind', async () => {
    const sb = await loggedIn();
    const r = await agyctl(['check', '--restart', '--model', 'no-such-model'], sb);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/not offered/);
    expectNoProbeLeftovers(sb);
  });
});

describe('agyctl check after agyctl login', () => {
  it('login exits 0, then every check passes, across a restart too', async () => {
    const sb = fresh();
    const login = spawnAgyctl(['login', '--json', '--timeout', '30s'], sb);
    const url = await waitForEvent(login, 'url');
    expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
    expect((await login).exitCode).toBe(0);
    const { human, doc } = await both(sb, ['--restart']);
    expect(human.exitCode, human.stdout).toBe(0);
    expect(doc.checks.every((c) => c.ok)).toBe(true);
    expectNoProbeLeftovers(sb);
  });
});

describe('agyctl check interrupted', () => {
  it('Ctrl-C during the live check: exit 130, no server left, no probe files', async () => {
    const sb = await loggedIn();
    const child = spawnAgyctl(['check', '--live'], sb, { env: { AGY_SIM_STARTUP_MS: '20000' } });
    // Wait (bounded) until agyctl and the server it spawned are both running.
    const deadline = Date.now() + 15_000;
    while (processesOf(sb).length < 2) {
      if (Date.now() > deadline) throw new Error('the server never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    expectNoProbeLeftovers(sb);
  });
});

describe('agyctl check --prometheus', () => {
  it('writes a parseable textfile atomically, also when the check fails', async () => {
    const sb = await loggedIn();
    const file = path.join(sb.root, 'agyctl.prom');
    const ok = await agyctl(['check', '--live', '--prometheus', file], sb);
    expect(ok.exitCode).toBe(0);
    let fams = parseExposition(fs.readFileSync(file, 'utf8'));
    expect(fams.get('agyctl_check_ok')!.samples[0]!.value).toBe(1);
    expect(fams.get('agyctl_server_start_seconds')!.samples[0]!.value).toBeGreaterThan(0);
    expect(fams.get('agyctl_token_file_mode_ok')!.samples[0]!.value).toBe(1);
    expect(fams.get('agyctl_check_duration_seconds')!.samples.map((s) => s.labels.check)).toContain('live');
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);

    fs.chmodSync(path.join(sb.stateDir, 'acp_token.json'), 0o640);
    const bad = await agyctl(['check', '--json', '--prometheus', file], sb);
    expect(bad.exitCode).toBe(6);
    fams = parseExposition(fs.readFileSync(file, 'utf8'));
    expect(fams.get('agyctl_check_ok')!.samples[0]!.value).toBe(0);
    expect(fams.get('agyctl_check_status')!.samples.find((s) => s.value === 1)!.labels.status).toBe('misconfigured');
    expect(fams.get('agyctl_token_file_mode_ok')!.samples[0]!.value).toBe(0);
    expect(fs.readdirSync(sb.root).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
