/**
 * ACP v2 and typed auth methods against the simulator: a server that answers
 * initialize with protocolVersion 2 and knows only v2's names
 * (AGY_SIM_PROTOCOL=v2), one that answers a version agyctl does not speak
 * (v3), and one whose methods carry types a client must run itself
 * (AGY_SIM_METHOD_TYPES=1).
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
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

let sandbox: Sandbox | undefined;

const V2 = { AGY_SIM_PROTOCOL: 'v2' };

async function loginWithBrowser(sb: Sandbox, env: NodeJS.ProcessEnv) {
  const child = spawnAgyctl(['login', '--json', '--timeout', '30s'], sb, { env });
  const url = await waitForEvent(child, 'url');
  expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
  const result = await child;
  return { result, events: parseEvents(String(result.stdout)) };
}

describe('a server that speaks only ACP v2', () => {
  it('probe reads info, capabilities and methodId; login (auth/login), check --live and logout (auth/logout) work', async () => {
    sandbox = makeSandbox(V2);
    const probe = await agyctl(['probe', '--json'], sandbox);
    expect(probe.exitCode, probe.stderr).toBe(0);
    const p = parseJson(probe.stdout).probe as Record<string, unknown>;
    expect(p).toMatchObject({ protocolVersion: 2, agent: { name: 'antigravity-acp' } });
    expect(p.authMethods).toEqual(['oauth-personal', 'oauth-business', 'gemini-api-key', 'agent-platform']);
    expect(p.authMethodTypes).toMatchObject({ 'oauth-personal': 'agent' });
    expect(p.capabilities).toMatchObject({ auth: { logout: {} } });

    const { result, events } = await loginWithBrowser(sandbox, V2);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.at(-1)).toMatchObject({ event: 'verified' });

    const check = await agyctl(['check', '--live', '--json'], sandbox);
    expect(check.exitCode, check.stdout).toBe(0);

    const out = await agyctl(['logout', '--json'], sandbox);
    expect(out.exitCode, out.stdout + out.stderr).toBe(0);
    expect(parseJson(out.stdout).logout).toMatchObject({ via: 'server', confirmed: true });
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('backup verify --prove loads the session with session/resume (replay from the start) and compares it', async () => {
    sandbox = authedSandbox(V2);
    const id = addConversation(sandbox, 2);
    const b = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk'), '--json'], sandbox);
    expect(b.exitCode, b.stderr).toBe(0);
    const snapshot = (parseJson(b.stdout).snapshot as { path: string }).path;
    const r = await agyctl(['backup', 'verify', snapshot, '--prove', '--json'], sandbox);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const prove = parseJson(r.stdout).prove as { ok: boolean; sessions: unknown[] };
    expect(prove.ok).toBe(true);
    expect(prove.sessions[0]).toMatchObject({ id, ok: true, replayed: { user: 2, agent: 2 } });
  });
});

describe('a protocol version agyctl does not speak', () => {
  it('probe and check --live: exit 4, code protocol-version-unsupported, naming the version', async () => {
    sandbox = makeSandbox({ AGY_SIM_PROTOCOL: 'v3' });
    const probe = await agyctl(['probe', '--json'], sandbox);
    expect(probe.exitCode, probe.stdout).toBe(4);
    const err = parseJson(probe.stdout).error as { code: string; message: string };
    expect(err.code).toBe('protocol-version-unsupported');
    expect(err.message).toMatch(/protocol version 3\b/);
    sandbox = authedSandbox({ AGY_SIM_PROTOCOL: 'v3' });
    const check = await agyctl(['check', '--live'], sandbox);
    expect(check.exitCode, check.stdout).toBe(4);
    expect(check.stdout + check.stderr).toMatch(/protocol version 3\b/);
  });
});

describe('typed auth methods', () => {
  it('probe lists each method with its type (absent means agent)', async () => {
    sandbox = makeSandbox({ AGY_SIM_METHOD_TYPES: '1' });
    const probe = await agyctl(['probe'], sandbox);
    expect(probe.exitCode, probe.stderr).toBe(0);
    expect(probe.stdout).toContain('oauth-personal (agent)');
    expect(probe.stdout).toContain('agy-terminal (terminal)');
    expect(probe.stdout).toContain('agy-env-key (env_var)');
  });

  it.each([
    ['agy-terminal', 'terminal'],
    ['agy-env-key', 'env_var'],
  ])('login --method %s: exit 2 with why, never sent to authenticate', async (method, type) => {
    sandbox = makeSandbox({ AGY_SIM_METHOD_TYPES: '1' });
    const r = await agyctl(['login', '--json', '--method', method], sandbox);
    expect(r.exitCode, r.stdout + r.stderr).toBe(2);
    const last = parseEvents(r.stdout).at(-1)!;
    expect(last).toMatchObject({ event: 'error', code: 'method-not-supported', exit: 2 });
    expect(String(last.message)).toContain(`it is a ${type} method`);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });
});

describe('auth/status in check --live', () => {
  interface Check {
    id: string;
    ok: boolean;
    result: string;
    message: string;
  }
  const checksOf = (stdout: string): Check[] => parseJson(stdout).checks as Check[];

  it.each([
    ['v1', {}],
    ['v2', V2],
  ])(
    '%s: signed in: asked first, names the account on the terminal and in --json, never in the trace',
    async (_v, env) => {
      sandbox = authedSandbox({ AGY_SIM_AUTH_STATUS: 'on', ...env });
      const trace = path.join(sandbox.root, 'trace.jsonl');
      const r = await agyctl(['check', '--live', '--json', '--trace', trace], sandbox);
      expect(r.exitCode, r.stdout).toBe(0);
      const status = checksOf(r.stdout).find((c) => c.id === 'auth-status');
      expect(status).toMatchObject({ ok: true, result: 'pass' });
      expect(status?.message).toContain('Google account <sim-user@example.com>');
      const traced = fs.readFileSync(trace, 'utf8');
      expect(traced).toContain('auth/status');
      expect(traced).not.toContain('sim-user@example.com');
      const human = await agyctl(['check', '--live'], sandbox);
      expect(human.stdout).toContain('sim-user@example.com');
    },
  );

  it('unauthenticated while a token file exists: exit 3, and no session was opened', async () => {
    sandbox = authedSandbox({ AGY_SIM_AUTH_STATUS: 'unauthenticated' });
    const r = await agyctl(['check', '--live', '--json'], sandbox);
    expect(r.exitCode, r.stdout).toBe(3);
    const doc = parseJson(r.stdout);
    expect(doc.status).toBe('not-authenticated');
    expect(checksOf(r.stdout).find((c) => c.id === 'token-file')).toMatchObject({ ok: true });
    expect(checksOf(r.stdout).find((c) => c.id === 'live')?.message).toMatch(/auth\/status: unauthenticated/);
    expect(fs.existsSync(path.join(sandbox.stateDir, 'conversations'))).toBe(false);
  });

  it('unknown is a note: the session check decides (exit 0)', async () => {
    sandbox = authedSandbox({ AGY_SIM_AUTH_STATUS: 'unknown' });
    const r = await agyctl(['check', '--live', '--json'], sandbox);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(checksOf(r.stdout).find((c) => c.id === 'auth-status')).toMatchObject({ ok: false, result: 'warning' });
  });
});
