/**
 * Issue 11 for login (H, I): what a killed login leaves behind, and login
 * failures that name their real fix.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, spawnAgyctl, waitNoProcesses, type Sandbox } from '../helpers/cli.js';
import { waitForEvent } from '../helpers/browser.js';
import { processStart } from '../../src/login/stale-dirs.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  if (!sandbox) return;
  expect(await waitNoProcesses(sandbox)).toEqual([]);
  sandbox.cleanup();
  sandbox = undefined;
});

const loginDirs = (sb: Sandbox): string[] => fs.readdirSync(sb.root).filter((f) => f.startsWith('agyctl-login-')).sort();

describe('leftovers of a killed login', () => {
  it('SIGKILL during login leaves its dir (URL inside); the next login removes it, and only dirs whose owner is gone', async () => {
    const sb = (sandbox = makeSandbox());
    const child = spawnAgyctl(['login', '--json', '--timeout', '30s'], sb);
    await waitForEvent(child, 'url');
    const killed = loginDirs(sb);
    expect(killed).toHaveLength(1);
    child.kill('SIGKILL');
    await child;
    expect(loginDirs(sb)).toEqual(killed);
    // A dir of a login still running (this test process stands in for it) stays.
    const alive = path.join(sb.root, 'agyctl-login-Alive1');
    fs.mkdirSync(alive, { mode: 0o700 });
    fs.writeFileSync(path.join(alive, 'owner'), `${process.pid} ${processStart(process.pid)}\n`);
    const r = await agyctl(['login', '--timeout', '2s', '-v'], sb, { env: { AGY_SIM_LAUNCH: 'none' } });
    expect(r.exitCode, r.stderr).toBe(5);
    expect(r.stderr).toContain(`removed ${path.join(sb.root, killed[0]!)}`);
    expect(loginDirs(sb)).toEqual(['agyctl-login-Alive1']);
  });
});
