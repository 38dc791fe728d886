/**
 * A server-starting command acts on exactly the state dir it
 * was given. A `<home>/.gemini/antigravity-acp` state dir steers the server
 * through HOME; any other shape is refused (exit 2) before anything changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseEvents, parseJson, type Sandbox, writeSettings } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

function plantToken(stateDir: string): string {
  fs.mkdirSync(stateDir, { recursive: true });
  fs.writeFileSync(path.join(stateDir, 'settings.json'), '{"auth":{"type":"oauth-personal"}}');
  const token = path.join(stateDir, 'acp_token.json');
  fs.writeFileSync(token, '{"refresh_token":"planted"}', { mode: 0o600 });
  return token;
}

/** The error of a --json run: one document, or an `error` event of a streaming command (login). */
function errorOf(stdout: string): Record<string, unknown> | undefined {
  try {
    const doc = parseJson(stdout);
    return (doc.event === 'error' ? doc : doc.error) as Record<string, unknown> | undefined;
  } catch {
    return parseEvents(stdout).find((e) => e.event === 'error');
  }
}

describe('--state-dir that is not the server default', () => {
  it("<other>/.gemini/antigravity-acp logout removes only that token; $HOME's stays", async () => {
    sandbox = makeSandbox();
    writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
    const homeToken = plantToken(sandbox.stateDir);
    const other = path.join(sandbox.root, 'other', '.gemini', 'antigravity-acp');
    const otherToken = plantToken(other);
    const r = await agyctl(['logout', '--json', '--state-dir', other], sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({
      logout: { tokenFile: otherToken, tokenRemoved: true, confirmed: true },
    });
    expect(fs.existsSync(otherToken)).toBe(false);
    expect(fs.existsSync(homeToken)).toBe(true);
  });

  for (const args of [
    ['logout', '--local'],
    ['logout'],
    ['login'],
    ['probe'],
    ['check', '--live'],
    ['check', '--restart'],
  ]) {
    it(`a state dir the server cannot use: ${args.join(' ')} refuses with exit 2 and changes nothing`, async () => {
      sandbox = makeSandbox();
      const homeToken = plantToken(sandbox.stateDir);
      const odd = path.join(sandbox.root, 'odd-state');
      const oddToken = plantToken(odd);
      const before = fs.readdirSync(odd).sort();
      const r = await agyctl([...args, '--json', '--state-dir', odd], sandbox);
      expect(r.exitCode, r.stdout + r.stderr).toBe(2);
      const error = errorOf(r.stdout);
      expect(error).toMatchObject({ code: 'state-dir-not-steerable', exit: 2 });
      expect(String(error?.hint)).toContain('.gemini/antigravity-acp');
      expect(fs.existsSync(oddToken)).toBe(true);
      expect(fs.existsSync(homeToken)).toBe(true);
      expect(fs.readdirSync(odd).sort()).toEqual(before);
    });
  }

  it('the same state dir given through AGYCTL_STATE_DIR is refused too', async () => {
    sandbox = makeSandbox();
    const odd = path.join(sandbox.root, 'odd-state');
    const oddToken = plantToken(odd);
    const r = await agyctl(['logout', '--local'], sandbox, { env: { AGYCTL_STATE_DIR: odd } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('odd-state');
    expect(fs.existsSync(oddToken)).toBe(true);
  });
});
