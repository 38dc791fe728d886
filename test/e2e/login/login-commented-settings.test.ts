/**
 * A settings.json with comments and no auth.type: `login` signs in, writes
 * auth.type into the file in place (the comments and the other keys stay),
 * and `check` then passes, instead of an internal error after the token was
 * written and `check` sending the user back to `login`. The simulator skips
 * the comments here (AGY_SIM_SETTINGS_COMMENTS, as gemini-cli does): whether
 * RC01 does is not known (docs/assumptions.md, `settings.comments`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { redirectFor } from '../../helpers/browser.js';
import { agyctl, makeSandbox, parseEvents, type Sandbox } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  if (sandbox) {
    await agyctl(['login', 'cancel'], sandbox);
  }
  sandbox = undefined;
});

const COMMENTED = '{\r\n  // the model this box uses\r\n  "model": "gemini-3.8-flash-low" /* kept */\r\n}\r\n';

describe('login on a settings.json with comments (and CRLF) and no auth.type', () => {
  it('signs in, writes auth.type keeping the comments, and check passes', async () => {
    sandbox = makeSandbox({ AGY_SIM_SETTINGS_COMMENTS: '1' });
    fs.mkdirSync(sandbox.stateDir, { recursive: true, mode: 0o700 });
    const file = path.join(sandbox.stateDir, 'settings.json');
    fs.writeFileSync(file, COMMENTED);
    const started = await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sandbox);
    expect(started.exitCode, started.stderr).toBe(0);
    const detached = parseEvents(started.stdout).find((e) => e.event === 'detached')!;
    const finish = await agyctl(['login', 'finish'], sandbox, { input: `${redirectFor(String(detached.url))}\n` });
    expect(finish.exitCode, finish.stderr).toBe(0);
    const done = await agyctl(['login', 'status', '--wait'], sandbox, { timeoutMs: 90_000 });
    expect(done.exitCode, `${done.stdout}\n${done.stderr}`).toBe(0);
    expect(`${done.stdout}${done.stderr}`).not.toMatch(/Internal error|This is a bug/);
    const after = fs.readFileSync(file, 'utf8');
    expect(after).toContain('// the model this box uses');
    expect(after).toContain('/* kept */');
    expect(after).toMatch(/"auth": \{\r\n\s+"type": "oauth-personal"\r\n\s+\}/);
    const check = await agyctl(['check'], sandbox);
    expect(check.exitCode, `${check.stdout}\n${check.stderr}`).toBe(0);
  });
});
