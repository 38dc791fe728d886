/**
 * Which servers and methods agyctl signs in: another vendor's agent is told
 * so plainly (exit 2, never a --method hint); a Google server whose names
 * drifted is never called foreign; a method agyctl cannot complete is
 * refused before authenticate.
 */
import { describe, expect, it } from 'vitest';
import type { InitializeResult } from '../../src/acp/protocol.js';
import type { AgyError } from '../../src/core/errors.js';
import { checkSignInMethod, foreignServer } from '../../src/profiles/sign-in-support.js';

const init = (name: string | undefined, methods: string[], title?: string): InitializeResult => ({
  ...(name === undefined ? {} : { agentInfo: { name, version: '0.9.1', ...(title ? { title } : {}) } }),
  authMethods: methods.map((id) => ({ id, name: id })),
});
const CODEX = init('codex-acp', ['chatgpt', 'codex-api-key', 'openai-api-key'], 'Codex');
const RC01 = init('antigravity-acp', ['oauth-personal', 'oauth-business', 'gemini-api-key', 'agent-platform']);

function refusal(i: InitializeResult, method: string): AgyError {
  try {
    checkSignInMethod(i, method);
  } catch (err) {
    return err as AgyError;
  }
  throw new Error('not refused');
}

describe('foreignServer', () => {
  it('names another vendor with its methods', () => {
    expect(foreignServer(CODEX)).toEqual({
      name: 'codex-acp 0.9.1',
      methods: ['chatgpt', 'codex-api-key', 'openai-api-key'],
    });
    expect(foreignServer(init('claude-code-acp', []))).toEqual({ name: 'claude-code-acp 0.9.1', methods: [] });
  });

  it.each<[string, InitializeResult]>([
    ['RC01', RC01],
    ['gemini-cli', init('gemini-cli', ['oauth-personal', 'gemini-api-key'])],
    ['a Google build with renamed name and methods', init('antigravity', ['google-login'], 'Google Antigravity')],
    ['a renamed Google build known by its title only', init('agy', ['google-login'], 'Google Antigravity')],
    ['no agentInfo at all', init(undefined, ['chatgpt'])],
    ['another name offering a Google method', init('my-wrapper', ['oauth-personal'])],
  ])('is never said of %s (fails soft)', (_what, i) => {
    expect(foreignServer(i)).toBeUndefined();
  });
});

describe('checkSignInMethod', () => {
  it('another vendor: exit 2, the plain sentence, no --method anywhere', () => {
    const err = refusal(CODEX, 'oauth-personal');
    expect(err.exit).toBe(2);
    expect(err.code).toBe('server-not-supported');
    expect(err.message).toBe(
      "agyctl signs in Google's ACP servers (antigravity-acp, gemini-cli); this server is codex-acp 0.9.1, whose methods are chatgpt, codex-api-key, openai-api-key.",
    );
    expect(`${err.message} ${err.hint}`).not.toMatch(/--method/);
    expect(refusal(CODEX, 'chatgpt').code).toBe('server-not-supported');
  });

  it('a Google server: a method it offers and agyctl knows passes; one it does not offer names only usable ones', () => {
    expect(() => checkSignInMethod(RC01, 'oauth-personal')).not.toThrow();
    const err = refusal(init('antigravity-acp', ['oauth-personal', 'sso']), 'oauth-business');
    expect(err.exit).toBe(2);
    expect(err.hint).toBe('use --method with one of: oauth-personal');
  });

  it('a method offered but not one agyctl can complete is refused before authenticate', () => {
    const err = refusal(init('antigravity-acp', ['oauth-personal', 'sso']), 'sso');
    expect(err.exit).toBe(2);
    expect(err.code).toBe('method-not-supported');
    expect(err.message).toMatch(/^agyctl cannot sign in with sso/);
    expect(err.hint).toBe('use --method with one of: oauth-personal');
  });

  it('a Google server offering none of the known methods: no --method hint that leads nowhere', () => {
    const err = refusal(init('antigravity', ['google-login'], 'Google Antigravity'), 'oauth-personal');
    expect(err.code).toBe('method-not-supported');
    expect(err.message).toMatch(/offers none of the auth methods agyctl can sign in with \(it offers google-login;/);
    expect(err.hint).not.toMatch(/--method/);
  });
});
