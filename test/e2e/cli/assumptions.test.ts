/**
 * docs/assumptions.md end to end: every guess about the server fails soft on
 * the simulator switched to "the other shape" (src/sim/config.ts, the
 * assumptions area), and `probe --assumptions` reports each fact as held on
 * the plain simulator and as differs on the other shapes, leaving the state
 * dir byte for byte as it was and no process behind.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ConversationNaming, MetaShape, TokenShape } from '../../../src/sim/config.js';
import { fakeToken } from '../../../src/sim/credential-files.js';
import { statePaths } from '../../../src/sim/paths.js';
import { ConversationDb } from '../../../src/sim/store.js';
import { agyctl, parseJson, type Sandbox, writeSettings } from '../../helpers/cli.js';
import { parseExposition } from '../../helpers/exposition.js';
import { useFreshSandbox } from '../../helpers/fresh-sandbox.js';
import { loginViaSim } from '../../helpers/sim-login.js';
import { changes, listTree } from '../../helpers/state-listing.js';

const fresh = useFreshSandbox();

interface Row {
  id: string;
  verdict: 'held' | 'differs' | 'unknown';
  seen: string | null;
}

/** A conversation as the simulator writes it under the given switches (closed, so checkpointed). */
function conversation(sb: Sandbox, naming: ConversationNaming = 'rc01', meta: MetaShape = 'rc01', turns = 2): string {
  const id = crypto.randomUUID();
  const db = ConversationDb.create(statePaths({ HOME: sb.home }, 'file', naming, meta), id, '/work/sim');
  for (let i = 0; i < turns; i += 1) db.appendTurn(`question ${i}`, `answer ${i}`, 'gemini-3.7-flash-high');
  db.close();
  return id;
}

/** Settings and a token file the simulator's login would write in that shape. */
function signedIn(sb: Sandbox, shape: TokenShape = 'rc01', mode = 0o600): void {
  writeSettings(sb, { auth: { type: 'oauth-personal' } });
  const file = path.join(sb.stateDir, 'acp_token.json');
  fs.writeFileSync(file, fakeToken(Date.now(), { tokenShape: shape, tokenExpired: false }), { mode });
  fs.chmodSync(file, mode);
}

async function probe(sb: Sandbox, env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<Map<string, Row>> {
  const before = listTree(sb.stateDir);
  const r = await agyctl(['probe', '--assumptions', '--json', ...args], sb, { env });
  expect(r.exitCode, r.stderr).toBe(0);
  expect(changes(before, listTree(sb.stateDir))).toEqual([]);
  const doc = parseJson(r.stdout) as { assumptions: { assumptions: Row[]; stateDir: { unchanged: boolean } } };
  expect(doc.assumptions.stateDir.unchanged).toBe(true);
  expect(fs.readdirSync(sb.root).filter((n) => n.startsWith('agyctl-'))).toEqual([]);
  return new Map(doc.assumptions.assumptions.map((a) => [a.id, a]));
}

const verdicts = (rows: Map<string, Row>, ids: string[]): Record<string, string> =>
  Object.fromEntries(ids.map((id) => [id, rows.get(id)?.verdict ?? 'missing']));

const ALL_IDS = [
  'settings.auth-type',
  'token.mode',
  'token.json',
  'token.expiry',
  'token.refresh',
  'conversations.naming',
  'conversations.ids',
  'conversations.sqlite-wal',
  'meta.present',
  'meta.cwd',
  'meta.keys',
  'brain.layout',
  'init.protocol-version',
  'init.agent-name',
  'init.auth-methods',
  'init.load-session',
  'init.logout',
  'start.time',
  'start.stdout-json',
  'load.params',
  'replay.pairs',
  'replay.full-text',
];

describe('agyctl probe --assumptions', () => {
  it('on the plain simulator every fact holds; the state dir is byte-identical, no session was created, nothing is left', async () => {
    const sb = fresh();
    signedIn(sb);
    const id = conversation(sb);
    fs.mkdirSync(path.join(sb.stateDir, 'brain', id), { recursive: true });
    fs.writeFileSync(path.join(sb.stateDir, 'brain', id, 'implementation_plan.md'), '# plan\n');
    const rows = await probe(sb);
    expect([...rows.keys()].sort()).toEqual([...ALL_IDS].sort());
    expect(verdicts(rows, ALL_IDS)).toEqual(Object.fromEntries(ALL_IDS.map((i) => [i, 'held'])));
    expect(rows.get('replay.pairs')!.seen).toBe('2 user and 2 agent chunk(s) in 4 message(s)');
    expect(fs.readdirSync(path.join(sb.stateDir, 'conversations'))).toEqual([`${id}.db`, `${id}.meta`]);
  });

  it('server shapes: initialize, replay, start-up time, stdout noise, foreign names, .meta and brain/ all differ', async () => {
    const sb = fresh();
    signedIn(sb, 'renamed');
    conversation(sb, 'rc01', 'renamed');
    conversation(sb, 'rc01', 'none');
    conversation(sb, 'sqlite');
    const rollback = new Database(path.join(sb.stateDir, 'conversations', 'notes.db'));
    rollback.exec('CREATE TABLE t (x)');
    rollback.close();
    fs.mkdirSync(path.join(sb.stateDir, 'brain', 'plans'), { recursive: true });
    const rows = await probe(
      sb,
      {
        AGY_SIM_INIT_SHAPE: 'other',
        AGY_SIM_REPLAY_SHAPE: 'chunked',
        AGY_SIM_NOISE: 'garbage',
        AGY_SIM_STARTUP_MS: '1200',
      },
      ['--timeout', '2s'],
    );
    const ids = [
      'token.refresh',
      'conversations.naming',
      'conversations.ids',
      'conversations.sqlite-wal',
      'meta.present',
      'meta.cwd',
      'brain.layout',
      'init.protocol-version',
      'init.agent-name',
      'init.auth-methods',
      'init.load-session',
      'init.logout',
      'start.time',
      'start.stdout-json',
      'replay.full-text',
    ];
    expect(verdicts(rows, ids)).toEqual(Object.fromEntries(ids.map((i) => [i, 'differs'])));
    expect(rows.get('conversations.naming')!.seen).toMatch(/\.sqlite"/);
    expect(rows.get('init.auth-methods')!.seen).toMatch(/advertised: google-login/);
    // The pairs still hold: each message came in two chunks, in turn order.
    expect(rows.get('replay.pairs')).toMatchObject({
      verdict: 'held',
      seen: '4 user and 4 agent chunk(s) in 4 message(s)',
    });
  });

  it('a token that is not JSON at mode 0644, and a session/load that fails, differ', async () => {
    const a = fresh();
    signedIn(a, 'opaque', 0o644);
    conversation(a);
    const opaque = await probe(a, { AGY_SIM_TOKEN_SHAPE: 'opaque', AGY_SIM_FORGET_SESSIONS: '1' });
    expect(verdicts(opaque, ['token.mode', 'token.json', 'load.params'])).toEqual({
      'token.mode': 'differs',
      'token.json': 'differs',
      'load.params': 'differs',
    });
    expect(opaque.get('load.params')!.seen).toMatch(/not found/i);
  });

  it('a conversation a server has open (its -wal and -shm exist) is copied with VACUUM INTO and loads', async () => {
    const sb = fresh();
    signedIn(sb);
    const id = crypto.randomUUID();
    const open = ConversationDb.create(statePaths({ HOME: sb.home }), id, '/work/sim');
    try {
      open.appendTurn('question', 'answer', 'gemini-3.7-flash-high');
      const conv = path.join(sb.stateDir, 'conversations');
      expect(fs.existsSync(path.join(conv, `${id}.db-wal`))).toBe(true);
      const names = fs.readdirSync(conv).sort();
      const r = await agyctl(['probe', '--assumptions', '--json'], sb);
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = parseJson(r.stdout) as { assumptions: { loadedSession: string; assumptions: Row[] } };
      expect(doc.assumptions.loadedSession).toBe(id);
      expect(doc.assumptions.assumptions.find((a) => a.id === 'replay.pairs')).toMatchObject({ verdict: 'held' });
      expect(fs.readdirSync(conv).sort()).toEqual(names);
    } finally {
      open.close();
    }
  });

  it('an empty conversation (the smallest) is passed over for one with messages; with only empty ones the replay is unknown, never differs', async () => {
    const sb = fresh();
    signedIn(sb);
    const empty = conversation(sb, 'rc01', 'rc01', 0);
    const onlyEmpty = await probe(sb);
    expect(verdicts(onlyEmpty, ['load.params', 'replay.pairs', 'replay.full-text'])).toEqual({
      'load.params': 'held',
      'replay.pairs': 'unknown',
      'replay.full-text': 'unknown',
    });
    expect(onlyEmpty.get('replay.pairs')!.seen).toContain('replayed no message');
    const full = conversation(sb, 'rc01', 'rc01', 2);
    expect(fs.statSync(path.join(sb.stateDir, 'conversations', `${empty}.db`)).size).toBeLessThanOrEqual(
      fs.statSync(path.join(sb.stateDir, 'conversations', `${full}.db`)).size,
    );
    const rows = await probe(sb);
    expect(verdicts(rows, ['replay.pairs', 'replay.full-text'])).toEqual({
      'replay.pairs': 'held',
      'replay.full-text': 'held',
    });
    expect(rows.get('replay.pairs')!.seen).toBe('2 user and 2 agent chunk(s) in 4 message(s)');
  });

  it('a replay without the answers differs (replay.pairs)', async () => {
    const sb = fresh();
    signedIn(sb);
    conversation(sb);
    const rows = await probe(sb, { AGY_SIM_REPLAY_SHAPE: 'user-only' });
    expect(rows.get('replay.pairs')).toMatchObject({
      verdict: 'differs',
      seen: '2 user and 0 agent chunk(s) in 1 message(s)',
    });
  });

  it('a token without expiry and settings whose auth.type is not a string differ; nothing is loaded without credentials', async () => {
    const sb = fresh();
    signedIn(sb, 'no-expiry');
    writeSettings(sb, { auth: { type: 42 } });
    conversation(sb);
    const rows = await probe(sb);
    expect(verdicts(rows, ['settings.auth-type', 'token.expiry', 'load.params'])).toEqual({
      'settings.auth-type': 'differs',
      'token.expiry': 'differs',
      'load.params': 'unknown',
    });
  });

  it('never prints a byte of the token file', async () => {
    const sb = fresh();
    signedIn(sb, 'opaque');
    const token = fs.readFileSync(path.join(sb.stateDir, 'acp_token.json'), 'utf8');
    const human = await agyctl(['probe', '--assumptions'], sb, { env: { AGY_SIM_TOKEN_SHAPE: 'opaque' } });
    expect(human.exitCode).toBe(0);
    for (const piece of token.split(' ')) expect(`${human.stdout}${human.stderr}`).not.toContain(piece);
    expect(human.stdout).toMatch(/^DIFFERS {2}token\.json: /m);
  });
});

describe('guesses about the token file fail soft (agyctl check)', () => {
  it('refresh token under another name, access token expired: no false warning, refreshToken null, no refresh metric', async () => {
    const sb = fresh({ AGY_SIM_TOKEN_SHAPE: 'renamed', AGY_SIM_TOKEN_EXPIRED: '1' });
    await loginViaSim(sb);
    const prom = path.join(sb.root, 'agyctl.prom');
    const r = await agyctl(['check', '--json', '--prometheus', prom], sb);
    expect(r.exitCode, r.stdout).toBe(0);
    const doc = parseJson(r.stdout) as { token: Record<string, unknown>; checks: Array<Record<string, unknown>> };
    expect(doc.token).toMatchObject({ refreshToken: null, fields: 'known' });
    expect(doc.token.expiresInS as number).toBeLessThan(0);
    expect(doc.checks.find((c) => c.id === 'token')).toMatchObject({ ok: true });
    expect(String(doc.checks.find((c) => c.id === 'token')!.message)).toMatch(/refresh token unknown/);
    const fams = parseExposition(fs.readFileSync(prom, 'utf8'));
    expect(fams.get('agyctl_token_refresh_token_present')?.samples ?? []).toEqual([]);
    expect(fams.get('agyctl_token_expiry_timestamp_seconds')!.samples).toHaveLength(1);
  });

  it('a token file that is not JSON is a note, not "not logged in"; the live check decides', async () => {
    const sb = fresh({ AGY_SIM_TOKEN_SHAPE: 'opaque' });
    await loginViaSim(sb);
    const r = await agyctl(['check', '--json'], sb);
    expect(r.exitCode, r.stdout).toBe(0);
    const doc = parseJson(r.stdout) as { checks: Array<Record<string, unknown>>; token: Record<string, unknown> };
    expect(doc.token).toMatchObject({ fields: 'not-json', refreshToken: null, expiresInS: null });
    expect(doc.checks.find((c) => c.id === 'token-file')).toMatchObject({ ok: true });
    expect(doc.checks.find((c) => c.id === 'token')).toMatchObject({ ok: false, severity: 'warning' });
    expect((await agyctl(['check', '--live'], sb)).exitCode).toBe(0);
  });
});

describe('guesses about conversations/ fail soft', () => {
  it('files named otherwise are named in a note by check and backup, never skipped in silence', async () => {
    const sb = fresh();
    signedIn(sb);
    const kept = conversation(sb);
    const other = conversation(sb, 'sqlite');
    const check = await agyctl(['check', '--json'], sb);
    expect(check.exitCode).toBe(0);
    const row = (parseJson(check.stdout) as { checks: Array<Record<string, unknown>> }).checks.find(
      (c) => c.id === 'conversations',
    );
    expect(row).toMatchObject({ ok: false, severity: 'warning' });
    expect(String(row!.message)).toContain(`"${other}.sqlite"`);
    const backup = await agyctl(['backup', '--to', path.join(sb.root, 'bk'), '--json'], sb);
    expect(backup.exitCode, backup.stderr).toBe(0);
    expect(backup.stderr).toContain(`"${other}.sqlite"`);
    expect((parseJson(backup.stdout) as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id)).toEqual([kept]);
    expect(fs.existsSync(path.join(sb.stateDir, 'conversations', `${other}.sqlite`))).toBe(true);
  });

  it('.meta with more keys, the cwd under another key, or no .meta: backed up and restored byte for byte, cwd unknown where it is', async () => {
    const sb = fresh();
    signedIn(sb);
    const ids = {
      extended: conversation(sb, 'rc01', 'extended'),
      renamed: conversation(sb, 'rc01', 'renamed'),
      none: conversation(sb, 'rc01', 'none'),
    };
    const conv = path.join(sb.stateDir, 'conversations');
    const metaBefore = Object.fromEntries(
      Object.values(ids).map((id) => [
        id,
        fs.existsSync(path.join(conv, `${id}.meta`)) ? fs.readFileSync(path.join(conv, `${id}.meta`), 'utf8') : null,
      ]),
    );
    const listed = await agyctl(['sessions', '--json'], sb);
    expect(listed.exitCode).toBe(0);
    const cwd = Object.fromEntries(
      (parseJson(listed.stdout) as { sessions: Array<{ id: string; cwd: string | null }> }).sessions.map((s) => [
        s.id,
        s.cwd,
      ]),
    );
    expect(cwd).toEqual({ [ids.extended]: '/work/sim', [ids.renamed]: null, [ids.none]: null });
    const backup = await agyctl(['backup', '--to', path.join(sb.root, 'bk'), '--json'], sb);
    expect(backup.exitCode, backup.stderr).toBe(0);
    const snapshot = (parseJson(backup.stdout) as { snapshot: { path: string } }).snapshot.path;
    for (const f of fs.readdirSync(conv)) fs.rmSync(path.join(conv, f));
    const restored = await agyctl(['restore', snapshot, '--json'], sb);
    expect(restored.exitCode, restored.stderr).toBe(0);
    for (const [id, text] of Object.entries(metaBefore)) {
      const file = path.join(conv, `${id}.meta`);
      expect(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null).toBe(text);
      expect(fs.existsSync(path.join(conv, `${id}.db`))).toBe(true);
    }
  });
});

describe('guesses about the protocol fail soft', () => {
  it('another initialize shape and a replay in pieces: check --restart still passes', async () => {
    const sb = fresh();
    await loginViaSim(sb);
    const r = await agyctl(['check', '--restart'], sb, {
      env: { AGY_SIM_INIT_SHAPE: 'other', AGY_SIM_REPLAY_SHAPE: 'chunked' },
    });
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
  });
});
