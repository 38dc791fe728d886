/**
 * `agyctl probe --sign-in` against the REAL gemini-cli (the pinned dev
 * dependency), asked to sign in and signing in by itself at start-up (the
 * re-login case): its browser launch is caught and reported, settings.json is
 * left byte for byte as it was (gemini-cli records the method it is asked
 * for), and nothing of its process group or files remains. No network is
 * needed: the probe never signs in.
 *
 * @module-tag gemini-cli
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agyctl, parseJson, waitNoProcesses } from '../../helpers/cli.js';
import { type GeminiSandbox, makeGeminiSandbox } from '../../helpers/gemini.js';

let sandbox: GeminiSandbox | undefined;

/**
 * Run the probe in `sb` and check what every sign-in probe must leave: the
 * Google URL with its /oauth2callback redirect, the listener never
 * contacted, settings.json byte for byte, the state dir unchanged, no
 * token, no shim dir, no process. Returns the report for the case's own checks.
 */
async function probeLeavingNothing(sb: GeminiSandbox): Promise<Record<string, any>> {
  const settingsBefore = fs.readFileSync(sb.settingsFile);
  const result = await agyctl(['probe', '--sign-in', '--json', '--profile', 'gemini-cli', '--timeout', '60s'], sb, {
    timeoutMs: 100_000,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  const r = (parseJson(result.stdout) as { signIn: Record<string, any> }).signIn;
  expect(r.channel).toBe('shim');
  expect(r.url).toMatchObject({
    host: 'accounts.google.com',
    redirect: { host: '127.0.0.1', path: '/oauth2callback' },
    params: { state: '[REDACTED]' },
  });
  expect(r.listener).toEqual({ port: r.url.redirect.port, contacted: false });
  expect(fs.readFileSync(sb.settingsFile).equals(settingsBefore)).toBe(true);
  expect(r.stateDir).toMatchObject({ unchanged: true, left: [], missing: [] });
  expect(fs.readdirSync(sb.root).filter((f) => f.startsWith('agyctl-'))).toEqual([]);
  expect(fs.existsSync(sb.tokenFile)).toBe(false);
  expect(await waitNoProcesses(sb, 10_000)).toEqual([]);
  return r;
}

describe('probe --sign-in (gemini-cli)', () => {
  it('reports the launcher and the /oauth2callback redirect, and leaves settings.json and the state dir as they were', {
    timeout: 120_000,
  }, async () => {
    sandbox = makeGeminiSandbox();
    const r = await probeLeavingNothing(sandbox);
    expect(r.method).toBe('oauth-personal');
    expect(r.startupSignIn).toBe(false);
    expect(r.token.file).toBe(sandbox.tokenFile);
  });

  it('the start-up sign-in (oauth-personal selected, no credentials: gemini-cli signs in before it answers initialize) is reported as such, and leaves nothing', {
    timeout: 120_000,
  }, async () => {
    sandbox = makeGeminiSandbox();
    sandbox.writeGeminiSettings({ security: { auth: { selectedType: 'oauth-personal' } } });
    const r = await probeLeavingNothing(sandbox);
    expect(r).toMatchObject({ method: 'startup', startupSignIn: true });
  });
});
