/**
 * Proofs against a recorded replay, on the built binary with the
 * simulator: `backup verify --prove` records what a fresh server replayed
 * (replay.json), later proofs compare with it; without a record nothing is
 * judged from table row counts. Also the scratch state's credentials
 * too: a server that rewrites them in place cannot reach the box's.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, parseJson, type Sandbox, spawnAgyctl } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

let sandbox: Sandbox | undefined;

async function snapshotOf(sb: Sandbox): Promise<string> {
  const r = await agyctl(['backup', '--to', path.join(sb.root, 'bk'), '--json'], sb);
  expect(r.exitCode).toBe(0);
  return (parseJson(r.stdout) as any).snapshot.path as string;
}

async function verifyProve(sb: Sandbox, snapshot: string, env: NodeJS.ProcessEnv = {}) {
  const r = await agyctl(['backup', 'verify', snapshot, '--prove', '--json'], sb, { env });
  return { exitCode: r.exitCode, doc: parseJson(r.stdout) as any, stderr: r.stderr };
}

const sha256 = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('a recorded replay', () => {
  it('is written by backup verify --prove (0600, beside the manifest), checked by verify, and compared by the next proofs', async () => {
    sandbox = authedSandbox();
    const id = addConversation(sandbox, 3);
    const snapshot = await snapshotOf(sandbox);

    const first = await verifyProve(sandbox, snapshot);
    expect(first.exitCode).toBe(0);
    expect(first.doc.prove.sessions[0]).toMatchObject({ id, ok: true, history: 'not-compared' });
    // This run recorded the replay: the note says so, and never "no replay recorded" beside "replay recorded in".
    expect(first.doc.prove.notes).toEqual([
      'history not compared this time (no replay was recorded yet); recorded now for the next proof',
    ]);
    const human = await agyctl(['backup', 'verify', await snapshotOf(sandbox), '--prove'], sandbox);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(/replay recorded in /);
    expect(human.stdout).not.toMatch(/no replay recorded/);
    const file = path.join(snapshot, 'replay.json');
    expect(first.doc.prove.replay.written).toEqual({ file, sessions: 1 });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const record = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(record).toMatchObject({ kind: 'agyctl-replay', schemaVersion: 1 });
    expect(record.sessions[0]).toMatchObject({ id, user: 3, agent: 3, order: 'uauaua' });
    expect(record.sessions[0].messages).toHaveLength(6);

    const verify = await agyctl(['backup', 'verify', snapshot, '--json'], sandbox);
    expect(verify.exitCode).toBe(0);
    expect((parseJson(verify.stdout) as any).verify.replay).toEqual({ file, ok: true, sessions: 1 });

    const second = await verifyProve(sandbox, snapshot);
    expect(second.exitCode).toBe(0);
    expect(second.doc.prove.sessions[0]).toMatchObject({ id, ok: true, history: 'identical' });
    expect(second.doc.prove.notes).toEqual([]);
    expect(second.doc.prove.replay).toMatchObject({ status: 'recorded', written: null });

    const restore = await agyctl(['restore', snapshot, '--prove', '--json'], sandbox);
    expect(restore.exitCode).toBe(0);
    expect((parseJson(restore.stdout) as any).prove.sessions[0]).toMatchObject({ id, ok: true, history: 'identical' });
  });

  it('catches a history that comes back one message short, naming the session and the counts (exit 6)', async () => {
    sandbox = authedSandbox();
    const id = addConversation(sandbox, 2);
    const snapshot = await snapshotOf(sandbox);
    expect((await verifyProve(sandbox, snapshot)).exitCode).toBe(0);

    const r = await agyctl(['restore', snapshot, '--prove'], sandbox, { env: { AGY_SIM_REPLAY_DROP_LAST: '1' } });
    expect(r.exitCode).toBe(6);
    expect(r.stdout).toContain(
      `FAILED   ${id}: replayed 2 user and 1 agent messages; the recorded replay has 2 and 2: message 4 (agent) and what follows were not replayed`,
    );
    const json = await verifyProve(sandbox, snapshot, { AGY_SIM_REPLAY_DROP_LAST: '1' });
    expect(json.exitCode).toBe(6);
    expect(json.doc.prove.sessions[0]).toMatchObject({ id, ok: false, history: 'differs', differsFrom: 4 });
  });

  it('catches an altered message and says from which message on the text differs (exit 6)', async () => {
    sandbox = authedSandbox();
    const id = addConversation(sandbox, 3);
    const snapshot = await snapshotOf(sandbox);
    expect((await verifyProve(sandbox, snapshot)).exitCode).toBe(0);

    const r = await agyctl(['restore', snapshot, '--prove', '--json'], sandbox, { env: { AGY_SIM_REPLAY_ALTER: '2' } });
    expect(r.exitCode).toBe(6);
    const s = (parseJson(r.stdout) as any).prove.sessions[0];
    expect(s).toMatchObject({ id, ok: false, loaded: true, history: 'differs', differsFrom: 3 });
    expect(s.problem).toBe(
      'the replayed text differs from the recorded replay from message 3 on: message 3 (user) differs from the recorded one',
    );
    // The record itself is left as it was: a failed proof never rewrites it.
    const before = sha256(path.join(snapshot, 'replay.json'));
    expect((await verifyProve(sandbox, snapshot, { AGY_SIM_REPLAY_ALTER: '2' })).exitCode).toBe(6);
    expect(sha256(path.join(snapshot, 'replay.json'))).toBe(before);
  });

  it('a tampered record is a damaged snapshot for verify and a failed proof, and is never overwritten (exit 6)', async () => {
    sandbox = authedSandbox();
    addConversation(sandbox, 2);
    const snapshot = await snapshotOf(sandbox);
    expect((await verifyProve(sandbox, snapshot)).exitCode).toBe(0);
    const file = path.join(snapshot, 'replay.json');
    const record = JSON.parse(fs.readFileSync(file, 'utf8'));
    record.sessions[0].agent = 1; // still valid JSON, and a plausible count
    record.sessions[0].order = 'uau';
    record.sessions[0].messages.pop();
    fs.writeFileSync(file, JSON.stringify(record));
    const tampered = sha256(file);

    const verify = await agyctl(['backup', 'verify', snapshot], sandbox);
    expect(verify.exitCode).toBe(6);
    expect(verify.stdout).toContain(
      'BAD      replay.json: replay.json does not match its own sha256 (edited or damaged)',
    );

    const restore = await agyctl(['restore', snapshot, '--prove', '--json'], sandbox);
    expect(restore.exitCode).toBe(6);
    const prove = (parseJson(restore.stdout) as any).prove;
    expect(prove.replay.status).toBe('damaged');
    expect(prove.ok).toBe(false);
    expect(sha256(file)).toBe(tampered);
  });

  it('belongs to its manifest: a record copied from another snapshot is damaged (exit 6)', async () => {
    sandbox = authedSandbox();
    addConversation(sandbox, 1);
    const a = await snapshotOf(sandbox);
    expect((await verifyProve(sandbox, a)).exitCode).toBe(0);
    addConversation(sandbox, 1);
    const b = await snapshotOf(sandbox);
    fs.copyFileSync(path.join(a, 'replay.json'), path.join(b, 'replay.json'));
    const verify = await agyctl(['backup', 'verify', b, '--json'], sandbox);
    expect(verify.exitCode).toBe(6);
    expect((parseJson(verify.stdout) as any).verify.replay.problem).toMatch(/recorded for another manifest\.json/);
  });

  it('backup --prove proves the new snapshot and records its replay', async () => {
    sandbox = authedSandbox();
    const id = addConversation(sandbox, 2);
    const r = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk'), '--prove', '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const doc = parseJson(r.stdout) as any;
    expect(doc.prove).toMatchObject({ ok: true, scratch: true });
    expect(doc.prove.sessions[0]).toMatchObject({ id, ok: true, history: 'not-compared' });
    const record = JSON.parse(fs.readFileSync(path.join(doc.snapshot.path, 'replay.json'), 'utf8'));
    expect(record.sessions.map((s: any) => s.id)).toEqual([id]);
  });
});

describe('tables the reference does not describe', () => {
  it('no gen_metadata, another row count per turn, an extra table: no false alarm, with or without a record', async () => {
    sandbox = authedSandbox({ AGY_SIM_TABLES: 'other' });
    const id = addConversation(sandbox, 2, '/work/sim', 0, 'other');
    const snapshot = await snapshotOf(sandbox);
    const rows = JSON.parse(fs.readFileSync(path.join(snapshot, 'manifest.json'), 'utf8')).sessions[0].rows;
    expect(rows.gen_metadata).toBeUndefined();
    expect(rows).toMatchObject({ steps: 6, turn_checkpoints: 4 });

    const restore = await agyctl(['restore', snapshot, '--prove', '--json'], sandbox);
    expect(restore.exitCode).toBe(0);
    expect((parseJson(restore.stdout) as any).prove.sessions[0]).toMatchObject({
      id,
      ok: true,
      history: 'not-compared',
      replayed: { user: 2, agent: 2 },
    });
    expect((await verifyProve(sandbox, snapshot)).exitCode).toBe(0);
    const again = await verifyProve(sandbox, snapshot);
    expect(again.exitCode).toBe(0);
    expect(again.doc.prove.sessions[0]).toMatchObject({ id, ok: true, history: 'identical' });
  });

  it('an empty session (replays nothing, no record says otherwise) is reported as empty, never a failure: restore, verify and backup --prove exit 0', async () => {
    sandbox = authedSandbox();
    const empty = addConversation(sandbox, 0);
    const full = addConversation(sandbox, 2);
    const snapshot = await snapshotOf(sandbox);
    const r = await agyctl(['restore', snapshot, '--force', '--prove', '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const byId = (doc: any) => Object.fromEntries(doc.prove.sessions.map((s: any) => [s.id, s]));
    expect(byId(parseJson(r.stdout))[empty]).toMatchObject({ ok: true, loaded: true, history: 'empty' });
    expect(byId(parseJson(r.stdout))[empty].problem).toBeUndefined();
    for (let i = 0; i < 2; i += 1) {
      const v = await verifyProve(sandbox, snapshot);
      expect(v.exitCode).toBe(0);
      expect(byId(v.doc)[empty]).toMatchObject({ ok: true, history: 'empty' });
      expect(byId(v.doc)[full]).toMatchObject({ ok: true, history: i === 0 ? 'not-compared' : 'identical' });
    }
    const b = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk'), '--prove'], sandbox);
    expect(b.exitCode, b.stderr).toBe(0);
    expect(b.stdout).toContain(`empty    ${empty}: loaded, replayed no messages (nothing to compare)`);
    expect(b.stdout).not.toMatch(/FAILED|NOT proved/);
  });
});

describe('the scratch state of backup verify --prove', () => {
  it("a server that rewrites its settings and token in place writes only the scratch copies: the box's stay byte-identical", async () => {
    sandbox = authedSandbox({ AGY_SIM_REWRITE_CREDENTIALS: 'own' });
    addConversation(sandbox, 1);
    const snapshot = await snapshotOf(sandbox);
    const files = ['settings.json', 'acp_token.json'].map((n) => path.join(sandbox!.stateDir, n));
    const before = files.map(sha256);
    const r = await verifyProve(sandbox, snapshot);
    expect(r.exitCode).toBe(0);
    expect(files.map(sha256)).toEqual(before);
    expect(r.doc.prove.credentials).toEqual({ changed: [] });
    expect(fs.readdirSync(sandbox.root).filter((n) => n.startsWith('agyctl-prove-'))).toEqual([]);
  });

  it("a server that writes the box's own files some other way is caught and reported loudly (exit 6)", async () => {
    sandbox = authedSandbox();
    sandbox.env.AGY_SIM_REWRITE_CREDENTIALS = sandbox.stateDir; // ignores HOME, like a server that asks the password database
    addConversation(sandbox, 1);
    const snapshot = await snapshotOf(sandbox);
    const files = ['settings.json', 'acp_token.json'].map((n) => path.join(sandbox!.stateDir, n));
    const original = files.map((f) => fs.readFileSync(f));
    const r = await agyctl(['backup', 'verify', snapshot, '--prove'], sandbox);
    expect(r.exitCode).toBe(6);
    expect(r.stdout).toMatch(/NOT proved/);
    expect(r.stdout).toContain(
      `the box's settings.json and acp_token.json in ${sandbox.stateDir} changed while the scratch server ran`,
    );
    for (const [i, f] of files.entries()) fs.writeFileSync(f, original[i]!);
    const json = await verifyProve(sandbox, snapshot);
    expect(json.exitCode).toBe(6);
    expect(json.doc.prove.credentials).toEqual({ changed: ['settings.json', 'acp_token.json'] });
  });
});

describe('scratch dirs left by SIGKILL', () => {
  it('the next proof removes ours whose owner is gone, and keeps one whose owner still runs', async () => {
    sandbox = authedSandbox({ AGY_SIM_STARTUP_MS: '30000' });
    addConversation(sandbox, 1);
    const snapshot = await snapshotOf(sandbox);
    const child = spawnAgyctl(['backup', 'verify', snapshot, '--prove'], sandbox);
    const scratch = (): string[] => fs.readdirSync(sandbox!.root).filter((n) => n.startsWith('agyctl-prove-'));
    const deadline = Date.now() + 20_000;
    // Once the token copy is there, the scratch dir is complete and the server is starting.
    const ready = (): boolean =>
      scratch().some((d) => fs.existsSync(path.join(sandbox!.root, d, 'home/.gemini/antigravity-acp/acp_token.json')));
    while (Date.now() < deadline && !ready()) await new Promise((r) => setTimeout(r, 50));
    expect(ready()).toBe(true);
    child.kill('SIGKILL');
    await child;
    expect(scratch()).toHaveLength(1); // SIGKILL: nothing could remove it
    // An archive dir whose owner (this test) still runs is not ours to remove.
    const alive = path.join(sandbox.root, 'agyctl-archive-AbC123');
    fs.mkdirSync(alive, { mode: 0o700 });
    fs.writeFileSync(path.join(alive, 'owner'), `${process.pid} -\n`);

    const r = await agyctl(['backup', 'verify', snapshot, '--prove'], sandbox, { env: { AGY_SIM_STARTUP_MS: '0' } });
    expect(r.exitCode).toBe(0);
    expect(scratch()).toEqual([]);
    expect(fs.existsSync(alive)).toBe(true);
  });
});
