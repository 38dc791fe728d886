/**
 * A server build that keeps its credentials outside acp_token.json (the OS
 * keyring on some agy builds; AGY_SIM_TOKEN_STORE=keyring in the sim):
 * login completes and says where the credentials are not, and `check`
 * lets the live evidence win over the token-file heuristic.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import {
  agyctl,
  makeSandbox,
  parseEvents,
  parseJson,
  type Sandbox,
  spawnAgyctl,
  waitNoProcesses,
} from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

const KEYRING = { AGY_SIM_TOKEN_STORE: 'keyring' };

async function loginOnce(sb: Sandbox) {
  const child = spawnAgyctl(['login', '--json', '--timeout', '30s'], sb);
  const url = await waitForEvent(child, 'url');
  expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
  const result = await child;
  return { result, events: parseEvents(String(result.stdout)) };
}

type Check = { id: string; ok: boolean; severity: string; message: string; hint?: string; decidedBy?: string };

describe('credentials kept outside the state dir', () => {
  it('login completes; the proof says the credentials are elsewhere; no acp_token.json', async () => {
    sandbox = makeSandbox(KEYRING);
    const { result, events } = await loginOnce(sandbox);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.at(-1)).toMatchObject({
      event: 'verified',
      credentials: 'elsewhere',
      sessionProbe: { removed: true },
    });
    expect(String(result.stderr)).toMatch(
      /note: no acp_token\.json; the server holds credentials elsewhere, e\.g\. the OS keyring/,
    );
    expect(fs.existsSync(path.join(sandbox.stateDir, 'acp_token.json'))).toBe(false);
    expect(fs.existsSync(path.join(sandbox.home, '.local', 'share', 'agy-sim-keyring', 'token.json'))).toBe(true);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('check without --live: the missing file is a finding and --live decides (exit 3); with --live: healthy, exit 0, the finding a note', async () => {
    sandbox = makeSandbox(KEYRING);
    expect((await loginOnce(sandbox)).result.exitCode).toBe(0);

    const st = await agyctl(['check', '--json'], sandbox);
    expect(st.exitCode).toBe(3);
    const stDoc = parseJson(st.stdout) as { status: string; checks: Check[] };
    const stToken = stDoc.checks.find((c) => c.id === 'token-file')!;
    expect(stToken).toMatchObject({ ok: false, severity: 'error' });
    expect(stToken.message).toMatch(/no token file .*acp_token\.json.*`agyctl check --live` decides/);
    expect(stToken.decidedBy).toBeUndefined();

    const prom = path.join(sandbox.root, 'agyctl.prom');
    const live = await agyctl(['check', '--live', '--json', '--prometheus', prom], sandbox);
    expect(live.exitCode, live.stderr).toBe(0);
    const doc = parseJson(live.stdout) as { status: string; checks: Check[] };
    expect(doc.status).toBe('ok');
    const token = doc.checks.find((c) => c.id === 'token-file')!;
    expect(token).toMatchObject({ ok: false, severity: 'warning', decidedBy: 'live' });
    expect(token.message).toMatch(/no acp_token\.json .*the server holds credentials elsewhere, e\.g\. the OS keyring/);
    expect(token.hint).toBeUndefined();
    expect(doc.checks.find((c) => c.id === 'live')).toMatchObject({ ok: true });
    const metrics = fs.readFileSync(prom, 'utf8');
    expect(metrics).toMatch(/^agyctl_check_ok 1$/m);
    expect(metrics).toMatch(/^agyctl_check_status\{status="ok"\} 1$/m);
    expect(metrics).toMatch(/^agyctl_credentials_elsewhere 1$/m);
    expect(metrics).toMatch(/^agyctl_check_passed\{check="token-file",severity="warning"\} 0$/m);

    const human = await agyctl(['check', '--live'], sandbox);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(/^i token-file +no acp_token\.json/m);
    expect(human.stdout).toMatch(/^status: ok$/m);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('a token file at 0644 stays a finding even when --live succeeds (exit 6)', async () => {
    sandbox = makeSandbox();
    expect((await loginOnce(sandbox)).result.exitCode).toBe(0);
    fs.chmodSync(path.join(sandbox.stateDir, 'acp_token.json'), 0o644);
    const live = await agyctl(['check', '--live', '--json'], sandbox);
    expect(live.exitCode).toBe(6);
    const doc = parseJson(live.stdout) as { checks: Check[] };
    expect(doc.checks.find((c) => c.id === 'token-file')).toMatchObject({ ok: false, severity: 'error' });
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('a missing token file with a server that refuses: still not-authenticated (exit 3)', async () => {
    sandbox = makeSandbox();
    expect((await loginOnce(sandbox)).result.exitCode).toBe(0);
    fs.rmSync(path.join(sandbox.stateDir, 'acp_token.json'));
    const live = await agyctl(['check', '--live', '--json'], sandbox);
    expect(live.exitCode).toBe(3);
    const doc = parseJson(live.stdout) as { status: string; checks: Check[] };
    expect(doc.status).toBe('not-authenticated');
    expect(doc.checks.find((c) => c.id === 'token-file')).toMatchObject({ ok: false, severity: 'error' });
    expect(doc.checks.find((c) => c.id === 'token-file')!.decidedBy).toBeUndefined();
  });
});
