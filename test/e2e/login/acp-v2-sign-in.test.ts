/**
 * The sign-in's side of ACP v2 and its drafts, against the simulator: the
 * auth status a server pushes (`auth/status_update`, a vendor's
 * `_auth/status_update`) or answers (`auth/status`) names the account at the
 * end of a login and in `login status`; a URL the server withdraws
 * (`$/cancel_request` of its elicitation) is no longer offered and the login
 * ends without waiting out --timeout; and agyctl withdraws its own pending
 * `auth/login` with `$/cancel_request` when it gives up on a v2 server.
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
import { authedSandbox } from '../../helpers/sim-conversations.js';

let sandbox: Sandbox | undefined;

const EMAIL = 'sim-user@example.com';

async function loginWithBrowser(sb: Sandbox, env: NodeJS.ProcessEnv, extra: string[] = []) {
  const child = spawnAgyctl(['login', '--json', '--timeout', '30s', ...extra], sb, { env });
  const url = await waitForEvent(child, 'url');
  expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
  const result = await child;
  return { result, events: parseEvents(String(result.stdout)) };
}

interface TraceLine {
  dir: string;
  msg: { id?: unknown; method?: string; params?: Record<string, unknown> };
}
const traceOf = (file: string): TraceLine[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TraceLine);

describe('login names the account the server signed in', () => {
  it.each([
    ['v2, auth/status_update', { AGY_SIM_PROTOCOL: 'v2', AGY_SIM_AUTH_STATUS_PUSH: 'standard' }],
    ['v1, a vendor _auth/status_update', { AGY_SIM_AUTH_STATUS_PUSH: 'vendor' }],
    ['v2, no push: asked with auth/status', { AGY_SIM_PROTOCOL: 'v2', AGY_SIM_AUTH_STATUS: 'on' }],
  ] as Array<[string, NodeJS.ProcessEnv]>)(
    '%s: the verified event and login status carry it; the trace never holds the email',
    async (_name, env) => {
      sandbox = makeSandbox(env);
      const trace = path.join(sandbox.root, 'trace.jsonl');
      const { result, events } = await loginWithBrowser(sandbox, env, ['--trace', trace]);
      expect(result.exitCode, String(result.stderr)).toBe(0);
      const account = { label: 'Google account', email: EMAIL, source: 'server' };
      expect(events.at(-1)).toMatchObject({ event: 'verified', account });
      if (env.AGY_SIM_AUTH_STATUS_PUSH)
        expect(events.find((e) => e.event === 'auth-status')).toMatchObject({ state: 'authenticated', account });
      expect(fs.readFileSync(trace, 'utf8')).not.toContain(EMAIL);

      const status = await agyctl(['login', 'status', '--json'], sandbox);
      expect(status.exitCode, status.stderr).toBe(0);
      expect(parseJson(status.stdout).login).toMatchObject({ status: 'succeeded', account });
      const human = await agyctl(['login', 'status'], sandbox);
      expect(human.stdout).toContain(`Signed in as Google account <${EMAIL}>.`);
    },
  );

  it('check --live --prometheus: the account is on the terminal, never in a metric or the trace', async () => {
    sandbox = authedSandbox({ AGY_SIM_PROTOCOL: 'v2', AGY_SIM_AUTH_STATUS: 'on' });
    const prom = path.join(sandbox.root, 'agyctl.prom');
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const r = await agyctl(['check', '--live', '--prometheus', prom, '--trace', trace], sandbox);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(EMAIL);
    const metrics = fs.readFileSync(prom, 'utf8');
    expect(metrics).toContain('check="auth-status"');
    expect(metrics).not.toContain('@');
    expect(fs.readFileSync(trace, 'utf8')).not.toContain(EMAIL);
    const json = await agyctl(['check', '--live', '--json'], sandbox);
    const checks = parseJson(json.stdout).checks as Array<{ id: string; account?: unknown }>;
    expect(checks.find((c) => c.id === 'auth-status')?.account).toEqual({
      label: 'Google account',
      email: EMAIL,
      source: 'server',
    });
  });

  it('human login output ends with the account', async () => {
    sandbox = makeSandbox({ AGY_SIM_AUTH_STATUS_PUSH: 'standard' });
    const child = spawnAgyctl(['login', '--timeout', '30s'], sandbox);
    let stdout = '';
    const url = await new Promise<string>((resolve) =>
      child.stdout!.on('data', (b: Buffer) => {
        stdout += b.toString();
        const m = /^(https:\/\/accounts\.google\.com\/\S+)$/m.exec(stdout);
        if (m) resolve(m[1]!);
      }),
    );
    expect(await httpGet(redirectFor(url))).toBe(200);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stdout)).toContain(`Signed in as Google account <${EMAIL}>.`);
  });

  it('a hostile account: no escape, control or bidi character reaches the terminal, the record or --json', async () => {
    const env = { AGY_SIM_AUTH_STATUS_PUSH: 'standard', AGY_SIM_HOSTILE_SIGN_IN: '1' };
    sandbox = makeSandbox(env);
    const { result, events } = await loginWithBrowser(sandbox, env);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const account = events.at(-1)!.account as { label: string; email: string };
    for (const shown of [account.label, account.email]) {
      expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(shown).not.toMatch(/\p{Cf}/u);
    }
    expect(account.email).toBe('sim-user@example.com root@evil.example');
    const human = await agyctl(['login', 'status'], sandbox);
    expect(human.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]|\p{Cf}/u);
    expect(human.stdout).toContain('Signed in as ');
  });

  it('a server that names no account: no account field, no line', async () => {
    sandbox = makeSandbox();
    const { result, events } = await loginWithBrowser(sandbox, {});
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.at(-1)).toMatchObject({ event: 'verified' });
    expect(events.at(-1)).not.toHaveProperty('account');
    const status = await agyctl(['login', 'status', '--json'], sandbox);
    expect(parseJson(status.stdout).login).toMatchObject({ account: null });
  });
});

describe('a sign-in URL the server withdraws', () => {
  const WITHDRAWING = { AGY_SIM_ELICITATION: 'only', AGY_SIM_LAUNCH: 'none', AGY_SIM_ELICITATION_WITHDRAW_MS: '300' };

  it('then fails the sign-in: the login says it was withdrawn and ends with the server answer (exit 3), at once', async () => {
    sandbox = makeSandbox();
    const started = Date.now();
    const r = await agyctl(['login', '--json', '--timeout', '60s'], sandbox, {
      env: { ...WITHDRAWING, AGY_SIM_ELICITATION_WITHDRAW: 'fail' },
    });
    expect(r.exitCode, r.stdout + r.stderr).toBe(3);
    expect(Date.now() - started).toBeLessThan(30_000);
    const events = parseEvents(r.stdout);
    const url = events.find((e) => e.event === 'url')!;
    expect(events.find((e) => e.event === 'url-withdrawn')).toMatchObject({ elicitationId: url.via });
    const last = events.at(-1)!;
    expect(last).toMatchObject({ event: 'error', code: 'auth-failed', exit: 3 });
    expect(String(last.message)).toMatch(/withdrew the sign-in URL, then reported that the sign-in failed/);
    expect(r.stderr).toMatch(
      /the server withdrew the sign-in URL \(elicitation agy-sim-signin-[0-9a-f]{8}\): do not open it/,
    );
    expect(r.stderr).not.toMatch(/listener-gone|login listener .* is gone/);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('then never answers: the login stops waiting (exit 3, sign-in-withdrawn), the record offers no URL', async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '--json', '--timeout', '6s'], sandbox, {
      env: { ...WITHDRAWING, AGY_SIM_ELICITATION_WITHDRAW: 'silent' },
    });
    await waitForEvent(child, 'url-withdrawn');
    const pending = await agyctl(['login', 'status', '--json'], sandbox);
    expect(parseJson(pending.stdout).login).toMatchObject({ status: 'pending', url: null, tunnel: null });
    const r = await child;
    expect(r.exitCode, String(r.stdout)).toBe(3);
    expect(parseEvents(String(r.stdout)).at(-1)).toMatchObject({ event: 'error', code: 'sign-in-withdrawn' });
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });
});

describe('agyctl withdraws its own pending sign-in when it gives up', () => {
  const cancels = (file: string) =>
    traceOf(file).filter((l) => l.dir === 'send' && l.msg.method === '$/cancel_request');
  const loginId = (file: string) =>
    traceOf(file).find((l) => l.dir === 'send' && (l.msg.method === 'auth/login' || l.msg.method === 'authenticate'))
      ?.msg.id;

  it('v2, the deadline: $/cancel_request names the pending auth/login before the server is stopped', async () => {
    sandbox = makeSandbox({ AGY_SIM_PROTOCOL: 'v2' });
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const r = await agyctl(['login', '--json', '--verbose', '--timeout', '3s', '--trace', trace], sandbox);
    expect(r.exitCode, r.stdout).toBe(5);
    const sent = cancels(trace);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.msg.params).toEqual({ requestId: loginId(trace) });
    // The simulator heard it as the cancellation of that request.
    expect(r.stderr).toMatch(/agy-acp-sim: the client cancelled request \d+; the sign-in stops/);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('v2, Ctrl-C: $/cancel_request is sent, exit 130, nothing left', async () => {
    sandbox = makeSandbox({ AGY_SIM_PROTOCOL: 'v2' });
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const child = spawnAgyctl(['login', '--json', '--timeout', '60s', '--trace', trace], sandbox);
    await waitForEvent(child, 'url');
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(cancels(trace).map((l) => l.msg.params)).toEqual([{ requestId: loginId(trace) }]);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('v2, probe --sign-in (which always gives up): $/cancel_request names its auth/login', async () => {
    sandbox = makeSandbox({ AGY_SIM_PROTOCOL: 'v2' });
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const r = await agyctl(['probe', '--sign-in', '--json', '--trace', trace], sandbox);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(cancels(trace).map((l) => l.msg.params)).toEqual([{ requestId: loginId(trace) }]);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('v1 (RC01): nothing is sent, the server is stopped as before', async () => {
    sandbox = makeSandbox();
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const r = await agyctl(['login', '--json', '--timeout', '3s', '--trace', trace], sandbox);
    expect(r.exitCode, r.stdout).toBe(5);
    expect(cancels(trace)).toEqual([]);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });
});
