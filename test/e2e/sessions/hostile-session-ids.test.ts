/**
 * A server that answers session/new with `..` or `.` must not
 * steer a delete. check --live, login's proof and logout exit 4 with
 * `protocol-bad-session-id`, and the state dir (token, settings,
 * conversations, brain/) is left as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseEvents, parseJson, type Sandbox, writeSettings } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

const KEY = 'AIzaFAKEFAKEFAKEFAKEFAKEFAKE';
const CONVERSATION = '4d5a6c89-0be5-4d98-ac4d-dede75c780fe';

/** A state dir with something in every place a bad id could reach. */
function plantedBox(id: string): Sandbox {
  const box = makeSandbox({ GEMINI_API_KEY: KEY, AGY_SIM_SESSION_ID: id });
  writeSettings(box, { auth: { type: 'gemini-api-key' } });
  fs.writeFileSync(path.join(box.stateDir, 'acp_token.json'), '{"refresh_token":"planted"}', { mode: 0o600 });
  fs.mkdirSync(path.join(box.stateDir, 'conversations'), { recursive: true });
  fs.writeFileSync(path.join(box.stateDir, 'conversations', `${CONVERSATION}.db`), 'planted');
  fs.mkdirSync(path.join(box.stateDir, 'brain', CONVERSATION), { recursive: true });
  fs.writeFileSync(path.join(box.stateDir, 'brain', CONVERSATION, 'plan.md'), 'planted');
  return box;
}

function expectIntact(box: Sandbox, opts: { token: boolean }): void {
  expect(fs.existsSync(path.join(box.stateDir, 'settings.json'))).toBe(true);
  if (opts.token) expect(fs.existsSync(path.join(box.stateDir, 'acp_token.json'))).toBe(true);
  expect(fs.readFileSync(path.join(box.stateDir, 'conversations', `${CONVERSATION}.db`), 'utf8')).toBe('planted');
  expect(fs.readFileSync(path.join(box.stateDir, 'brain', CONVERSATION, 'plan.md'), 'utf8')).toBe('planted');
}

describe('a server that answers session/new with a path-like id', () => {
  for (const id of ['..', '.']) {
    it(`check --live with sessionId ${JSON.stringify(id)}: exit 4, protocol-bad-session-id, nothing removed`, async () => {
      sandbox = plantedBox(id);
      const r = await agyctl(['check', '--live', '--json'], sandbox);
      expect(r.exitCode, r.stderr).toBe(4);
      const doc = parseJson(r.stdout) as { status: string; checks: Array<{ id: string; code?: string }> };
      expect(doc.status).toBe('server-error');
      expect(doc.checks.find((c) => c.id === 'live')?.code).toBe('protocol-bad-session-id');
      expectIntact(sandbox, { token: true });
    });
  }

  it("login's proof: exit 4, nothing removed", async () => {
    sandbox = plantedBox('..');
    const r = await agyctl(['login', '--method', 'gemini-api-key', '--json'], sandbox);
    expect(r.exitCode, r.stderr).toBe(4);
    const error = parseEvents(r.stdout).find((e) => e.event === 'error');
    expect(error).toMatchObject({ code: 'protocol-bad-session-id', exit: 4 });
    expectIntact(sandbox, { token: true });
  });

  it("logout's confirmation: exit 4, settings, conversations and brain/ stay", async () => {
    sandbox = plantedBox('..');
    const r = await agyctl(['logout', '--json'], sandbox);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(parseJson(r.stdout)).toMatchObject({ ok: false, error: { code: 'protocol-bad-session-id', exit: 4 } });
    // The server's own logout removes the token: that is logout's job; nothing else may go.
    expectIntact(sandbox, { token: false });
  });
});
