// Sessions: session/new, prompts, conversation databases, and session/load across restarts.
// Drives scripts/agy-acp-sim over stdio (docs/simulator.md); shared setup in ./helpers.ts.

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import {
  AVAILABLE_COMMANDS,
  authedSim,
  authRequired,
  convPath,
  DDL,
  expectedConfigOptions,
  expectedSessionState,
  LAUNCHER,
  newSession,
  queryLive,
  Sim,
  sleep,
  stateDir,
  tablesOf,
  tmp,
  useSimulator,
} from './helpers.js';

useSimulator();

describe('sessions', () => {
  it('session/new returns the RC01 catalog, then available_commands_update, and a WAL-only SQLite DB', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    const { id, sessionId, result } = await newSession(sim, '/work/project');
    expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(result).toEqual({ sessionId, ...expectedSessionState() });
    const cmd = await until('commands', 5_000, () =>
      sim.updates(sessionId).find((m) => m.params.update.sessionUpdate === 'available_commands_update'),
    );
    expect(cmd.params.update).toEqual(AVAILABLE_COMMANDS);
    expect(sim.messages.indexOf(cmd)).toBeGreaterThan(sim.responseIndex(id));

    const db = convPath(home, sessionId);
    expect(readFileSync(convPath(home, sessionId, 'meta'), 'utf8')).toBe('{"cwd":"/work/project"}');
    expect(existsSync(`${db}-wal`)).toBe(true);

    // The live DB, read through its WAL: the seven tables with the exact DDL.
    expect(tablesOf(db).map((t) => t.sql)).toEqual(DDL);
    expect(queryLive(db, 'SELECT trajectory_id FROM trajectory_meta')).toEqual([{ trajectory_id: sessionId }]);
    expect(queryLive(db, 'SELECT id FROM trajectory_metadata_blob')).toEqual([{ id: 'main' }]);

    // The main file alone holds no schema while the server runs.
    const copyDir = tmp();
    copyFileSync(db, join(copyDir, 'copy.db'));
    expect(tablesOf(join(copyDir, 'copy.db'))).toEqual([]);
  });

  it('session/new validates cwd and mcpServers', async () => {
    const sim = await authedSim();
    const r = await sim.request('session/new', { mcpServers: [] });
    expect(r.error).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: { errors: [{ loc: ['cwd'], msg: 'field required', type: 'value_error.missing' }] },
    });
    expect((await sim.request('session/new', { cwd: '/w' })).error.data.errors[0].loc).toEqual(['mcpServers']);
  });

  it('session/prompt streams 3+ delta chunks before end_turn and stores the turn', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    const { sessionId } = await newSession(sim);

    const start = sim.messages.length;
    const pid = sim.start('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello there, simulator' }] });
    expect((await sim.response(pid)).result).toEqual({ stopReason: 'end_turn' });
    const after = sim.messages.slice(start);
    const chunks = after.filter((m) => m.method === 'session/update');
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const c of chunks) {
      expect(c.params.update.sessionUpdate).toBe('agent_message_chunk');
      expect(c.params.update.content.type).toBe('text');
    }
    expect(chunks.map((c) => c.params.update.content.text).join('')).toBe('SIM ECHO: hello there, simulator');
    expect(after[after.length - 1]!.id).toBe(pid); // notifications strictly before the response

    const m2 = sim.messages.length;
    const pid2 = sim.start('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Reply with exactly: HELLO ACP. Do not use any tools.' }],
    });
    await sim.response(pid2);
    const chunks2 = sim.messages.slice(m2).filter((m) => m.method === 'session/update');
    expect(chunks2.length).toBeGreaterThanOrEqual(3);
    expect(chunks2.map((c) => c.params.update.content.text).join('')).toBe('HELLO ACP.');

    const db = convPath(home, sessionId);
    const steps = queryLive<{ step_payload: Buffer }>(db, 'SELECT step_payload FROM steps ORDER BY idx');
    const texts = steps.map((s) => JSON.parse(s.step_payload.toString('utf8')).text);
    expect(texts).toEqual([
      'hello there, simulator',
      'SIM ECHO: hello there, simulator',
      'Reply with exactly: HELLO ACP. Do not use any tools.',
      'HELLO ACP.',
    ]);
    expect(queryLive(db, 'SELECT idx FROM gen_metadata ORDER BY idx')).toEqual([{ idx: 0 }, { idx: 1 }]);
    // Still nothing in the main file.
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy)).toEqual([]);
  });

  it("never checkpoints while running, even past SQLite's 1000-page autocheckpoint", async () => {
    const home = tmp();
    const sim = await authedSim({ AGY_SIM_WRITE_INTERVAL_MS: '1' }, home);
    const { sessionId } = await newSession(sim);
    const db = convPath(home, sessionId);
    // 260 rows of 20 KB = 5.2 MB of WAL, beyond the default 4 MB trigger.
    await until('5 MB of WAL', 30_000, () => statSync(`${db}-wal`).size > 5_200_000);
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy)).toEqual([]);
    expect(statSync(db).size).toBe(4096);
  }, 40_000);

  it('session/prompt on an unknown session fails', async () => {
    const sim = await authedSim();
    const r = await sim.request('session/prompt', { sessionId: '00000000-0000-4000-8000-000000000000', prompt: [] });
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toBe('Session not found');
  });

  it('session/set_config_option takes configId and returns updated configOptions', async () => {
    const sim = await authedSim();
    const { sessionId } = await newSession(sim);
    const wrong = await sim.request('session/set_config_option', {
      sessionId,
      configOptionId: 'model',
      value: 'gemini-3.8-flash-low',
    });
    expect(wrong.error).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: { errors: [{ loc: ['configId'], msg: 'field required', type: 'value_error.missing' }] },
    });
    const ok = await sim.result('session/set_config_option', {
      sessionId,
      configId: 'model',
      value: 'gemini-3.8-flash-low',
    });
    expect(ok).toEqual({ configOptions: expectedConfigOptions('gemini-3.8-flash-low', 'default') });
    const mode = await sim.result('session/set_config_option', { sessionId, configId: 'mode', value: 'yolo' });
    expect(mode).toEqual({ configOptions: expectedConfigOptions('gemini-3.8-flash-low', 'yolo') });
    const badValue = await sim.request('session/set_config_option', { sessionId, configId: 'model', value: 'gpt-5' });
    expect(badValue.error.code).toBe(-32602);
    expect(badValue.error.data.errors[0].loc).toEqual(['value']);
    const badId = await sim.request('session/set_config_option', { sessionId, configId: 'effort', value: 'low' });
    expect(badId.error.data.errors[0].loc).toEqual(['configId']);
  });

  it('session/set_mode takes modeId and answers {}', async () => {
    const sim = await authedSim();
    const { sessionId } = await newSession(sim);
    expect(await sim.result('session/set_mode', { sessionId, modeId: 'auto_edit' })).toEqual({});
    const cfg = await sim.result('session/set_config_option', {
      sessionId,
      configId: 'model',
      value: 'gemini-pro-agent',
    });
    expect(cfg.configOptions[1].currentValue).toBe('auto_edit');
    expect((await sim.request('session/set_mode', { sessionId, modeId: 'plan' })).error.code).toBe(-32602);
  });

  it('session/close answers {} and the connection survives', async () => {
    const sim = await authedSim();
    const { sessionId } = await newSession(sim);
    expect(await sim.result('session/close', { sessionId })).toEqual({});
    const r = await sim.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] });
    expect(r.error.message).toBe('Session not found');
    expect((await sim.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    await newSession(sim);
  });

  it('a /plan prompt writes brain/<sessionId>/implementation_plan.md, as the real server does', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    const { sessionId } = await newSession(sim);
    await sim.result('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: '/plan Organize a birthday party' }],
    });
    const plan = join(stateDir(home), 'brain', sessionId, 'implementation_plan.md');
    expect(readFileSync(plan, 'utf8')).toContain('Organize a birthday party');
    expect(statSync(plan).mode & 0o777).toBe(0o600);
  });

  it('session/list lists the stored conversations with their cwd', async () => {
    const sim = await authedSim();
    const a = await newSession(sim, '/work/a');
    const b = await newSession(sim, '/work/b');
    const listed = await sim.result('session/list', {});
    const byId = new Map<string, any>(listed.sessions.map((s: any) => [s.sessionId, s]));
    expect(byId.get(a.sessionId).cwd).toBe('/work/a');
    expect(byId.get(b.sessionId).cwd).toBe('/work/b');
    const filtered = await sim.result('session/list', { cwd: '/work/b' });
    expect(filtered.sessions.map((s: any) => s.sessionId)).toEqual([b.sessionId]);
  });

  it('logout deletes acp_token.json; session/new then needs authentication', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    await newSession(sim);
    expect(await sim.result('logout', {})).toEqual({});
    expect(existsSync(join(stateDir(home), 'acp_token.json'))).toBe(false);
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
  });

  it('AGY_SIM_PERMISSION_PROMPT=1: asks session/request_permission before streaming', async () => {
    const sim = await authedSim({ AGY_SIM_PERMISSION_PROMPT: '1' });
    const { sessionId } = await newSession(sim, '/work/p');
    const pid = sim.start('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'make a file' }] });
    const ask = await until('permission request', 5_000, () =>
      sim.messages.find((m) => m.method === 'session/request_permission'),
    );
    expect(ask.id).toBeDefined();
    expect(ask.params.sessionId).toBe(sessionId);
    expect(ask.params.options).toEqual([
      { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
      { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
    ]);
    expect(ask.params.toolCall).toMatchObject({ title: 'Run create_file?', kind: 'edit', status: 'pending' });
    expect(ask.params.toolCall.content[0]).toMatchObject({
      type: 'diff',
      path: '/work/p/sim-permission-probe.txt',
      _meta: { kind: 'add' },
    });
    await sleep(150);
    expect(sim.hasResponse(pid)).toBe(false);
    expect(sim.updates(sessionId).some((m) => m.params.update.sessionUpdate === 'agent_message_chunk')).toBe(false);

    const askIndex = sim.messages.indexOf(ask);
    sim.send({ id: ask.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
    expect((await sim.response(pid)).result).toEqual({ stopReason: 'end_turn' });
    const after = sim.messages
      .slice(askIndex + 1)
      .filter((m) => m.method === 'session/update')
      .map((m) => m.params.update);
    expect(after[0]).toMatchObject({
      sessionUpdate: 'tool_call_update',
      status: 'completed',
      toolCallId: ask.params.toolCall.toolCallId,
    });
    expect(
      after
        .slice(1)
        .map((u) => u.content.text)
        .join(''),
    ).toBe('SIM ECHO: make a file');

    // yolo auto-approves: no question asked.
    await sim.result('session/set_mode', { sessionId, modeId: 'yolo' });
    const before = sim.messages.filter((m) => m.method === 'session/request_permission').length;
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] });
    expect(sim.messages.filter((m) => m.method === 'session/request_permission').length).toBe(before);
  });

  it('AGY_SIM_WRITE_INTERVAL_MS appends ~20 KB steps rows while a session is open', async () => {
    const home = tmp();
    const sim = await authedSim({ AGY_SIM_WRITE_INTERVAL_MS: '40' }, home);
    const { sessionId } = await newSession(sim);
    const db = convPath(home, sessionId);
    const rows = await until('filler rows', 5_000, () => {
      const r = queryLive<{ n: number; len: number }>(
        db,
        'SELECT COUNT(*) AS n, MIN(LENGTH(step_payload)) AS len FROM steps WHERE step_type = 99',
      )[0]!;
      return r.n >= 4 ? r : undefined;
    });
    expect(rows.len).toBe(20 * 1024);
    await sim.result('session/close', { sessionId });
    const n1 = queryLive<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM steps')[0]!.n;
    await sleep(200);
    expect(queryLive<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM steps')[0]!.n).toBe(n1);
  });
});

describe('session/load across restarts', () => {
  async function conversationOnDisk(home: string): Promise<string> {
    const sim = await authedSim({}, home);
    const { sessionId } = await newSession(sim, '/work/load');
    await sim.result('session/set_config_option', { sessionId, configId: 'model', value: 'gemini-3.8-flash-low' });
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first question' }] });
    await sim.result('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Reply with exactly: second answer' }],
    });
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    return sessionId;
  }

  it('a plain exit leaves the WAL un-checkpointed; the new process replays full-text history', async () => {
    const home = tmp();
    const sessionId = await conversationOnDisk(home);
    const db = convPath(home, sessionId);
    expect(statSync(`${db}-wal`).size).toBeGreaterThan(0);
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy)).toEqual([]);

    const sim = new Sim(home); // settings + token from the first run: no authenticate needed
    const id = sim.start('session/load', { sessionId, cwd: '/work/load', mcpServers: [] });
    const r = await sim.response(id);
    expect(r.result).toEqual(expectedSessionState()); // model reset to the default
    const updates = sim.updates(sessionId).map((m) => m.params.update);
    expect(updates).toEqual([
      { content: { text: 'first question', type: 'text' }, sessionUpdate: 'user_message_chunk' },
      { content: { text: 'SIM ECHO: first question', type: 'text' }, sessionUpdate: 'agent_message_chunk' },
      { content: { text: 'Reply with exactly: second answer', type: 'text' }, sessionUpdate: 'user_message_chunk' },
      { content: { text: 'second answer', type: 'text' }, sessionUpdate: 'agent_message_chunk' },
      AVAILABLE_COMMANDS,
    ]);
    const lastUpdate = sim.messages.findLastIndex((m) => m.method === 'session/update');
    expect(lastUpdate).toBeLessThan(sim.responseIndex(id));

    // The loaded session is live again.
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'third' }] });
    expect(queryLive(db, 'SELECT COUNT(*) AS n FROM steps')).toEqual([{ n: 6 }]);
  });

  it('AGY_SIM_CHECKPOINT_ON_EXIT=1 checkpoints on EOF', async () => {
    const home = tmp();
    const sim = await authedSim({ AGY_SIM_CHECKPOINT_ON_EXIT: '1' }, home);
    const { sessionId } = await newSession(sim);
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] });
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    const db = convPath(home, sessionId);
    expect(existsSync(`${db}-wal`)).toBe(false);
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy).length).toBe(7);
  });

  it('an unknown session id is "Session not found"', async () => {
    const sim = await authedSim();
    const r = await sim.request('session/load', {
      sessionId: '11111111-2222-4333-8444-555555555555',
      cwd: '/w',
      mcpServers: [],
    });
    expect(r.error).toEqual({
      code: -32000,
      message: 'Session not found',
      data: { message: 'Session not found: 11111111-2222-4333-8444-555555555555' },
    });
    const traversal = await sim.request('session/load', { sessionId: '../../settings', cwd: '/w', mcpServers: [] });
    expect(traversal.error.message).toBe('Session not found');
  });

  it('a .db file that is not a conversation is "Session not found"', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    const sessionId = '22222222-3333-4444-8555-666666666666';
    mkdirSync(join(stateDir(home), 'conversations'), { recursive: true });
    writeFileSync(convPath(home, sessionId), '');
    const r = await sim.request('session/load', { sessionId, cwd: '/w', mcpServers: [] });
    expect(r.error.message).toBe('Session not found');
  });

  it('AGY_SIM_FORGET_SESSIONS=1 makes every load fail', async () => {
    const home = tmp();
    const sessionId = await conversationOnDisk(home);
    const sim = new Sim(home, { AGY_SIM_FORGET_SESSIONS: '1' });
    const r = await sim.request('session/load', { sessionId, cwd: '/work/load', mcpServers: [] });
    expect(r.error.message).toBe('Session not found');
    expect(sim.updates(sessionId)).toEqual([]);
  });

  it('session/load needs authentication', async () => {
    const home = tmp();
    const sessionId = await conversationOnDisk(home);
    rmSync(join(stateDir(home), 'acp_token.json'));
    const sim = new Sim(home);
    const r = await sim.request('session/load', { sessionId, cwd: '/work/load', mcpServers: [] });
    expect(r.error).toEqual(authRequired(home));
  });
});

describe('--seed-conversations', () => {
  it('writes three checkpointed conversations with several turns that a server loads and replays', async () => {
    const home = tmp();
    const r = spawnSync(LAUNCHER, ['--seed-conversations'], { env: { ...process.env, HOME: home }, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const ids = r.stdout.trim().split('\n');
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      expect(existsSync(`${convPath(home, id)}-wal`)).toBe(false);
      expect(tablesOf(convPath(home, id)).length).toBe(7);
    }
    expect(existsSync(join(stateDir(home), 'brain', ids[0]!, 'implementation_plan.md'))).toBe(true);
    const sim = await authedSim({}, home);
    for (const id of ids) {
      await sim.result('session/load', { sessionId: id, cwd: '/w', mcpServers: [] });
      const kinds = sim.updates(id).map((m) => (m.params.update as { sessionUpdate: string }).sessionUpdate);
      expect(kinds.filter((k) => k === 'user_message_chunk').length).toBeGreaterThanOrEqual(3);
      expect(kinds.filter((k) => k === 'agent_message_chunk').length).toBeGreaterThanOrEqual(3);
    }
    const first = sim.updates(ids[0]!).map((m) => (m.params.update as { content?: { text?: string } }).content?.text);
    expect(first).toContain('PLAN ACCEPTED.');
  });

  it('takes no other argument', () => {
    const r = spawnSync(LAUNCHER, ['--seed-conversations', '--debug'], {
      env: { ...process.env, HOME: tmp() },
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('takes no other argument');
  });
});
