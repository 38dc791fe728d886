/**
 * What a killed login leaves behind, and login
 * failures that name their real fix.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processStart } from '../../../src/util/os/process.js';
import { waitForEvent } from '../../helpers/browser.js';
import {
  agyctl,
  makeSandbox,
  parseJson,
  type Sandbox,
  SIM,
  spawnAgyctl,
  waitNoProcesses,
  writeSettings,
} from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  if (!sandbox) return;
  expect(await waitNoProcesses(sandbox)).toEqual([]);
  sandbox = undefined;
});

const loginDirs = (sb: Sandbox): string[] =>
  fs
    .readdirSync(sb.root)
    .filter((f) => f.startsWith('agyctl-login-'))
    .sort();

describe('leftovers of a killed login', () => {
  // Every login runs under a detached supervisor (the owner of the dir); the foreground agyctl dying leaves the login pending by design.
  it('SIGKILL of a login (its supervisor) leaves its dir (URL inside); the next login removes it, and only dirs whose owner is gone', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    const child = spawnAgyctl(['login', '--json', '--timeout', '30s'], sb);
    await waitForEvent(child, 'url');
    const killed = loginDirs(sb);
    expect(killed).toHaveLength(1);
    const status = await agyctl(['login', 'status', '--json'], sb);
    const supervisor = Number((parseJson(status.stdout).login as { pid?: unknown }).pid);
    expect(fs.readFileSync(path.join(sb.root, killed[0]!, 'owner'), 'utf8')).toMatch(new RegExp(`^${supervisor} `));
    // Another dir of that same (soon dead) owner, unknown to the login record: only the sweep can find it.
    const orphan = path.join(sb.root, 'agyctl-login-Orphan');
    fs.mkdirSync(orphan, { mode: 0o700 });
    fs.writeFileSync(path.join(orphan, 'owner'), `${supervisor} ${processStart(supervisor)}\n`);
    child.kill('SIGKILL');
    await child.catch(() => undefined);
    process.kill(supervisor, 'SIGKILL');
    for (let i = 0; i < 50 && processStart(supervisor) !== undefined; i++) await new Promise((r) => setTimeout(r, 100));
    expect(loginDirs(sb)).toEqual([...killed, 'agyctl-login-Orphan'].sort());
    // A dir of a login still running (this test process stands in for it) stays.
    const alive = path.join(sb.root, 'agyctl-login-Alive1');
    fs.mkdirSync(alive, { mode: 0o700 });
    fs.writeFileSync(path.join(alive, 'owner'), `${process.pid} ${processStart(process.pid)}\n`);
    const r = await agyctl(['login', '--timeout', '2s', '-v'], sb, { env: { AGY_SIM_LAUNCH: 'none' } });
    expect(r.exitCode, r.stderr).toBe(5);
    expect(r.stderr).toContain(`supervisor (pid ${supervisor}) had died; cleaned up after it`);
    expect(r.stderr).toContain(`removed ${orphan}`);
    expect(loginDirs(sb)).toEqual(['agyctl-login-Alive1']);
  });
});

describe('login failures name their real fix', () => {
  const FRESH_URL = /for a fresh URL/;

  it('gemini-api-key without GEMINI_API_KEY: export it (the server reads its environment at start)', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    const r = await agyctl(['login', '--method', 'gemini-api-key', '--json'], sb);
    expect(r.exitCode, r.stderr).toBe(3);
    const hint = String((JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { hint?: string }).hint);
    expect(hint).toMatch(/export GEMINI_API_KEY=/);
    expect(hint).toMatch(/at start/);
    expect(hint).not.toMatch(FRESH_URL);
  });

  it('oauth-business without gcp settings: settings set-auth oauth-business --project --location', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    const r = await agyctl(['login', '--method', 'oauth-business'], sb);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/hint: .*agyctl settings set-auth oauth-business --project \S+ --location \S+/);
    expect(r.stderr).not.toMatch(FRESH_URL);
  });

  it('a busy callback port: names the port and what frees it', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const r = await agyctl(['login'], sb, {
        env: { AGY_SIM_CALLBACK_PORT: String(port), OAUTH_CALLBACK_PORT: String(port) },
      });
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toMatch(new RegExp(`hint: .*port ${port}.*(stop|unset OAUTH_CALLBACK_PORT)`));
      expect(r.stderr).not.toMatch(FRESH_URL);
    } finally {
      busy.close();
    }
  });

  it('login --method sso never suggests `settings set-auth sso`', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    writeSettings(sb, { auth: { type: 'oauth-personal' } });
    const r = await agyctl(['login', '--method', 'sso'], sb);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(/set-auth sso/);
  });

  it('an unknown auth.type in settings.json is refused before any server starts (exit 2)', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    writeSettings(sb, { auth: { type: 'sso' } });
    const marker = path.join(sb.root, 'server-ran');
    const server = path.join(sb.root, 'server.sh');
    fs.writeFileSync(server, `#!/bin/sh\ntouch ${marker}\nexec node ${SIM} "$@"\n`, { mode: 0o755 });
    const r = await agyctl(['login', '--json', '--timeout', '10s'], sb, { env: { AGYCTL_SERVER: server } });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(fs.existsSync(marker)).toBe(false);
    expect(r.stdout).toMatch(/"code":\s*"settings-invalid"/);
    expect(r.stdout).toMatch(/sso/);
  });

  it('a server that closes its stdout during the sign-in: exit 4 at once, not a timeout', async () => {
    const sb = makeSandbox({ AGY_SIM_CLOSE_STDOUT: 'authenticate' });
    sandbox = sb;
    const started = Date.now();
    const r = await agyctl(['login', '--timeout', '30s'], sb);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/closed its stdout/);
    expect(r.stderr).not.toMatch(/--timeout/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  // login shares this classification (src/login/startup.ts) but waits up to 60 s for initialize; probe and check show it quickly.
  it('a server that prints only garbage: exit 4 "not an ACP server", not a timeout (probe, check --live)', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    const server = path.join(sb.root, 'garbage.sh');
    fs.writeFileSync(server, `#!/bin/sh\nwhile :; do echo 'Usage: some-other-tool [options]'; sleep 0.2; done\n`, {
      mode: 0o755,
    });
    const r = await agyctl(['probe', '--timeout', '3s'], sb, { env: { AGYCTL_SERVER: server } });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/not JSON-RPC/);
    expect(r.stderr).toMatch(/Usage: some-other-tool/);
    const c = await agyctl(['check', '--live', '--timeout', '3s'], sb, { env: { AGYCTL_SERVER: server } });
    expect(c.stdout + c.stderr).toMatch(/not JSON-RPC/);
    expect(c.stdout + c.stderr).not.toMatch(/raise --timeout/);
  });
});
