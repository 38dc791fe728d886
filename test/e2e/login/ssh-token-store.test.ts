/**
 * A build that keeps its token by SSH_* (AGY_SIM_TOKEN_STORE=ssh-aware, like
 * Google's `agy`: a file when SSH_CONNECTION/SSH_CLIENT/SSH_TTY is set, the
 * keyring otherwise): a `login` over SSH and a later `check --live` without
 * SSH_* (the role's systemd timer) must look in the same store, because
 * every server agyctl starts runs without SSH_*.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import { agyctl, makeSandbox, parseEvents, type Sandbox, spawnAgyctl, waitNoProcesses } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

const SSH = {
  SSH_CONNECTION: '203.0.113.7 52814 192.0.2.10 22',
  SSH_CLIENT: '203.0.113.7 52814 22',
  SSH_TTY: '/dev/pts/3',
};

async function loginOverSsh(sb: Sandbox, env: NodeJS.ProcessEnv) {
  const child = spawnAgyctl(['login', '--json', '--timeout', '30s'], sb, { env: { ...SSH, ...env } });
  const url = await waitForEvent(child, 'url');
  expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
  const result = await child;
  return { result, events: parseEvents(String(result.stdout)) };
}

describe('a token store chosen by SSH_*', () => {
  it('login with SSH_CONNECTION set, then check --live without it: both use the same store (exit 0)', async () => {
    const env = { AGY_SIM_TOKEN_STORE: 'ssh-aware', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus' };
    sandbox = makeSandbox(env);
    const { result, events } = await loginOverSsh(sandbox, env);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.at(-1)).toMatchObject({ event: 'verified' });
    // The tunnel command still comes from agyctl's own SSH_CONNECTION.
    expect(String(events.find((e) => e.event === 'url')?.tunnel)).toContain('192.0.2.10');
    // The server ran without SSH_*: it used the keyring, as the timer's server will.
    expect(fs.existsSync(path.join(sandbox.home, '.local', 'share', 'agy-sim-keyring', 'token.json'))).toBe(true);
    expect(fs.existsSync(path.join(sandbox.stateDir, 'acp_token.json'))).toBe(false);
    const check = await agyctl(['check', '--live'], sandbox, { env });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });
});
