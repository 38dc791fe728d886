/**
 * gemini-cli's other stores, read locally with no server and no network:
 * GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true (the keychain or an encrypted
 * gemini-credentials.json bound to host and user) and the account recorded
 * in google_accounts.json.
 *
 * @module-tag gemini-cli
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, parseJson } from '../../helpers/cli.js';
import { type GeminiSandbox, makeGeminiSandbox } from '../../helpers/gemini.js';

let sandbox: GeminiSandbox | undefined;

interface Check {
  id: string;
  ok: boolean;
  result: string;
  message: string;
}

const signedInSettings = { security: { auth: { selectedType: 'oauth-personal' } } };

async function staticCheck(sb: GeminiSandbox, env: NodeJS.ProcessEnv = {}) {
  const r = await agyctl(['check', '--json', '--profile', 'gemini-cli'], sb, { env });
  return { exitCode: r.exitCode, checks: parseJson(r.stdout).checks as Check[], stdout: r.stdout };
}

describe('gemini-cli: the encrypted store', () => {
  it('GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true with gemini-credentials.json: named, unreadable to agyctl, not "missing"', async () => {
    sandbox = makeGeminiSandbox();
    sandbox.writeGeminiSettings(signedInSettings);
    const file = path.join(sandbox.geminiDir, 'gemini-credentials.json');
    fs.writeFileSync(file, 'opaque-ciphertext', { mode: 0o600 });
    const r = await staticCheck(sandbox, { GEMINI_FORCE_ENCRYPTED_FILE_STORAGE: 'true' });
    const token = r.checks.find((c) => c.id === 'token-file');
    expect(token).toMatchObject({ ok: false, result: 'warning' });
    expect(token?.message).toContain(file);
    expect(token?.message).toContain('agyctl cannot read that store');
    expect(token?.message).not.toMatch(/missing|does not exist/);
    expect(r.exitCode, r.stdout).toBe(0);
  });

  it('without the file: the OS keychain is named', async () => {
    sandbox = makeGeminiSandbox();
    sandbox.writeGeminiSettings(signedInSettings);
    const r = await staticCheck(sandbox, { GEMINI_FORCE_ENCRYPTED_FILE_STORAGE: 'true' });
    expect(r.checks.find((c) => c.id === 'token-file')?.message).toContain('OS keychain');
  });

  it('backup and restore say a restore onto another host or user loses that login', async () => {
    sandbox = makeGeminiSandbox();
    for (const args of [
      ['backup', '--to', path.join(sandbox.root, 'bk')],
      ['restore', path.join(sandbox.root, 'x')],
    ]) {
      const r = await agyctl([...args, '--profile', 'gemini-cli'], sandbox);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('a restore onto another host or user loses that login');
    }
  });
});

describe('gemini-cli: the signed-in account', () => {
  it('check shows the active account of google_accounts.json, with no server started', async () => {
    sandbox = makeGeminiSandbox({ AGYCTL_SERVER: '/nonexistent/gemini --acp' });
    sandbox.writeGeminiSettings(signedInSettings);
    fs.writeFileSync(
      path.join(sandbox.geminiDir, 'google_accounts.json'),
      JSON.stringify({ active: 'someone@example.com', old: ['earlier@example.com'] }),
    );
    const r = await staticCheck(sandbox);
    const account = r.checks.find((c) => c.id === 'account');
    expect(account).toMatchObject({
      ok: true,
      account: { label: 'Google account', email: 'someone@example.com', source: 'google_accounts.json' },
    });
    expect(account?.message).toContain('someone@example.com');
    expect(account?.message).not.toContain('earlier@example.com');
    const human = await agyctl(['check', '--profile', 'gemini-cli'], sandbox);
    expect(human.stdout).toContain('someone@example.com');
  });
});
