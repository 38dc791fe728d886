/**
 * An ACP server agyctl cannot sign in (another vendor's agent, here a small
 * one of our own presenting codex-acp's agentInfo and methods): `login` and
 * `probe --sign-in` exit 2 at once with the plain answer and never suggest
 * --method; `probe` still describes it; and on a Google server, a method it
 * offers that agyctl cannot complete is refused before the server waits.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseEvents, ROOT, type Sandbox, waitNoProcesses } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

const AGENT = `node ${path.join(ROOT, 'test', 'fixtures', 'other-vendor-agent.mjs')}`;
const PLAIN =
  "error: agyctl signs in Google's ACP servers (antigravity-acp, gemini-cli); this server is codex-acp 0.9.1, whose methods are chatgpt, codex-api-key, openai-api-key.";

function other(env: NodeJS.ProcessEnv = {}): Sandbox {
  sandbox = makeSandbox({ AGYCTL_SERVER: AGENT, ...env });
  return sandbox;
}

describe('a server no profile knows', () => {
  it.each([
    ['login', ['login', '--timeout', '60s']],
    ['login --method chatgpt', ['login', '--method', 'chatgpt', '--timeout', '60s']],
    ['probe --sign-in', ['probe', '--sign-in', '--timeout', '60s']],
  ])('%s: exit 2 at once with the plain answer, no --method hint, nothing left', async (_name, args) => {
    const sb = other();
    const started = Date.now();
    const r = await agyctl(args, sb);
    expect(r.exitCode, r.stderr).toBe(2);
    // The agent never answers authenticate: an answer this fast means agyctl never waited on it.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.stderr.split('\n')).toContain(PLAIN);
    expect(r.stderr).not.toMatch(/--method|pass --method/);
    expect(fs.readdirSync(sb.root).filter((f) => f.startsWith('agyctl-login-'))).toEqual([]);
    expect(await waitNoProcesses(sb)).toEqual([]);
  });

  it('--json: error code server-not-supported with the server and its methods (the login error event, the probe document)', async () => {
    const sb = other();
    const r = await agyctl(['login', '--json', '--timeout', '60s'], sb);
    expect(r.exitCode).toBe(2);
    expect(parseEvents(r.stdout).at(-1)).toMatchObject({
      event: 'error',
      code: 'server-not-supported',
      exit: 2,
      server: 'codex-acp 0.9.1',
      methods: ['chatgpt', 'codex-api-key', 'openai-api-key'],
    });
    const probe = await agyctl(['probe', '--sign-in', '--json', '--timeout', '60s'], sb);
    expect(probe.exitCode).toBe(2);
    expect(JSON.parse(probe.stdout)).toMatchObject({
      ok: false,
      error: { code: 'server-not-supported', exit: 2 },
      server: 'codex-acp 0.9.1',
      methods: ['chatgpt', 'codex-api-key', 'openai-api-key'],
    });
  });

  it('probe (describe only) still works and shows what the server says about itself', async () => {
    const sb = other();
    const r = await agyctl(['probe', '--json', '--timeout', '60s'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { agent?: { name: string }; authMethods?: string[] };
    expect(JSON.stringify(doc)).toContain('codex-acp');
    expect(JSON.stringify(doc)).toContain('chatgpt');
  });
});

describe('a Google server and a method agyctl cannot complete', () => {
  it('login --method sso, offered by the server: refused before authenticate (exit 2), with the usable methods', async () => {
    const sb = other({ FIXTURE_AGENT_NAME: 'antigravity-acp', FIXTURE_METHODS: 'oauth-personal,sso' });
    const started = Date.now();
    const r = await agyctl(['login', '--method', 'sso', '--timeout', '60s'], sb);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.stderr).toMatch(
      /^error: agyctl cannot sign in with sso: it is not a method agyctl knows how to complete/m,
    );
    expect(r.stderr).toMatch(/use --method with one of: oauth-personal$/m);
    expect(await waitNoProcesses(sb)).toEqual([]);
  });
});
