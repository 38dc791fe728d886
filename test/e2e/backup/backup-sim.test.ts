/**
 * backup and restore against the simulator (scripts/agy-acp-sim), which keeps
 * each conversation open in WAL mode without checkpointing, like RC01.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox, SIM } from '../../helpers/cli.js';

interface Msg {
  id?: number;
  method?: string;
  params?: any;
  result?: any;
  error?: any;
}

/** A minimal ACP client over the simulator's stdio: enough for session/new, prompt and load. */
class SimClient {
  readonly child: ChildProcess;
  readonly messages: Msg[] = [];
  private buf = '';
  private nextId = 1;
  readonly exited: Promise<void>;

  constructor(sb: Sandbox, env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [SIM], {
      env: { PATH: process.env.PATH, HOME: sb.home, AGY_SIM_LAUNCH: 'none', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (c: string) => this.onData(c));
    this.child.stderr!.resume();
    this.exited = new Promise((resolve) => this.child.on('exit', () => resolve()));
  }

  private onData(chunk: string): void {
    const lines = (this.buf + chunk).split('\n');
    this.buf = lines.pop()!;
    for (const l of lines) {
      try {
        this.messages.push(JSON.parse(l) as Msg);
      } catch {
        /* not JSON-RPC */
      }
    }
  }

  async call(method: string, params: unknown, timeoutMs = 15_000): Promise<any> {
    const id = this.nextId++;
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.messages.find((x) => x.id === id && !x.method);
      if (m) {
        if (m.error) throw new Error(`${method}: ${JSON.stringify(m.error)}`);
        return m.result;
      }
      if (Date.now() > deadline) throw new Error(`${method}: no answer in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async start(): Promise<void> {
    await this.call('initialize', {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
  }

  async newSession(cwd: string): Promise<string> {
    return ((await this.call('session/new', { cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
  }

  async prompt(sessionId: string, text: string): Promise<void> {
    await this.call('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  }

  /** SIGTERM: the sim dies at once without checkpointing (like a killed server). */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}

let sandbox: Sandbox | undefined;
const sims: SimClient[] = [];
afterEach(async () => {
  for (const s of sims.splice(0)) await s.stop();
  sandbox = undefined;
});

function authed(): Sandbox {
  const sb = makeSandbox();
  fs.mkdirSync(sb.stateDir, { recursive: true });
  fs.writeFileSync(path.join(sb.stateDir, 'settings.json'), JSON.stringify({ auth: { type: 'oauth-personal' } }));
  fs.writeFileSync(
    path.join(sb.stateDir, 'acp_token.json'),
    JSON.stringify({ access_token: 'ya29.fixture', refresh_token: '1//fixture', token_type: 'Bearer', expiry_date: 1 }),
    { mode: 0o600 },
  );
  return sb;
}

async function sim(sb: Sandbox, env: Record<string, string> = {}): Promise<SimClient> {
  const s = new SimClient(sb, env);
  sims.push(s);
  await s.start();
  return s;
}

function query<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

const TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name";
const COUNTS =
  'SELECT (SELECT count(*) FROM steps) AS steps, (SELECT count(*) FROM gen_metadata) AS gen, (SELECT count(*) FROM trajectory_meta) AS meta, (SELECT count(*) FROM trajectory_metadata_blob) AS blob';

describe('backup with the simulator', () => {
  it('snapshots a conversation whose schema and rows are only in the WAL; a copy of the .db alone reads empty', async () => {
    sandbox = authed();
    const s = await sim(sandbox);
    const id = await s.newSession('/work/sim');
    await s.prompt(id, 'first question');
    await s.prompt(id, 'Reply with exactly: second answer');
    const live = path.join(sandbox.stateDir, 'conversations', `${id}.db`);

    const copy = path.join(sandbox.root, 'copy.db');
    fs.copyFileSync(live, copy); // what a naive `cp` of the database file gets
    const r = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk'), '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    expect(query(copy, TABLES)).toEqual([]);

    const doc = parseJson(r.stdout) as any;
    const snap = path.join(doc.snapshot.path, `${id}.db`);
    expect(query<{ name: string }>(snap, TABLES).map((t) => t.name)).toEqual([
      'battle_mode_infos',
      'executor_metadata',
      'gen_metadata',
      'parent_references',
      'steps',
      'trajectory_meta',
      'trajectory_metadata_blob',
    ]);
    expect(query(snap, COUNTS)).toEqual(query(live, COUNTS));
    expect(query(snap, COUNTS)).toEqual([{ steps: 4, gen: 2, meta: 1, blob: 1 }]);

    const list = parseJson((await agyctl(['sessions', '--json'], sandbox)).stdout) as any;
    expect(list.sessions[0]).toMatchObject({ id, cwd: '/work/sim', openBy: [s.child.pid] });
  });

  it('under continuous writes (AGY_SIM_WRITE_INTERVAL_MS) the snapshot passes integrity_check and holds a consistent prefix', async () => {
    sandbox = authed();
    const s = await sim(sandbox, { AGY_SIM_WRITE_INTERVAL_MS: '3' });
    const id = await s.newSession('/work/busy');
    const live = path.join(sandbox.stateDir, 'conversations', `${id}.db`);
    const deadline = Date.now() + 15_000;
    while (query<{ n: number }>(live, 'SELECT count(*) AS n FROM steps')[0]!.n < 150 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const r = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk'), '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const doc = parseJson(r.stdout) as any;
    expect(doc.sessions[0].integrity).toBe('ok');
    const snap = path.join(doc.snapshot.path, `${id}.db`);
    const [range] = query<{ n: number; lo: number; hi: number }>(
      snap,
      'SELECT count(*) AS n, min(idx) AS lo, max(idx) AS hi FROM steps',
    );
    expect(range!.n).toBeGreaterThanOrEqual(150);
    expect(range).toEqual({ n: range!.n, lo: 0, hi: range!.n - 1 });
    expect(query(snap, 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    // The writer kept going: the live database is ahead of the snapshot.
    expect(query<{ n: number }>(live, 'SELECT count(*) AS n FROM steps')[0]!.n).toBeGreaterThanOrEqual(range!.n);
  });

  it('round trip: backup, change and delete, restore, then a fresh simulator replays the original history', async () => {
    sandbox = authed();
    const first = await sim(sandbox);
    const kept = await first.newSession('/work/kept');
    await first.prompt(kept, 'original question');
    const gone = await first.newSession('/work/gone');
    await first.prompt(gone, 'Reply with exactly: will be deleted. ok');
    const bk = path.join(sandbox.root, 'bk');

    const backedUp = await agyctl(['backup', '--to', bk, '--json'], sandbox);
    expect(backedUp.exitCode).toBe(0);
    const snapshot = (parseJson(backedUp.stdout) as any).snapshot.path as string;

    await first.prompt(kept, 'a later question that the restore must undo');
    await first.stop();
    const conv = path.join(sandbox.stateDir, 'conversations');
    for (const f of fs.readdirSync(conv).filter((n) => n.startsWith(gone))) fs.rmSync(path.join(conv, f));

    const restored = await agyctl(['restore', snapshot, '--json'], sandbox);
    expect(restored.exitCode).toBe(0);
    expect((parseJson(restored.stdout) as any).restore.sessions.map((x: any) => x.restored)).toEqual([true, true]);

    const second = await sim(sandbox);
    await second.call('session/load', { sessionId: kept, cwd: '/work/kept', mcpServers: [] });
    const replay = (sessionId: string): unknown[] =>
      second.messages
        .filter(
          (m) =>
            m.method === 'session/update' &&
            m.params.sessionId === sessionId &&
            /message_chunk$/.test(m.params.update.sessionUpdate),
        )
        .map((m) => [m.params.update.sessionUpdate, m.params.update.content.text]);
    expect(replay(kept)).toEqual([
      ['user_message_chunk', 'original question'],
      ['agent_message_chunk', 'SIM ECHO: original question'],
    ]);
    await second.call('session/load', { sessionId: gone, cwd: '/work/gone', mcpServers: [] });
    expect(replay(gone)).toEqual([
      ['user_message_chunk', 'Reply with exactly: will be deleted. ok'],
      ['agent_message_chunk', 'will be deleted.'],
    ]);
    // The restored conversation is live again.
    await second.prompt(kept, 'after the restore');
  });

  it('restore is refused while the simulator has the database open, and allowed with --force (pre-restore copy kept)', async () => {
    sandbox = authed();
    const s = await sim(sandbox);
    const id = await s.newSession('/work/held');
    await s.prompt(id, 'one');
    const bk = path.join(sandbox.root, 'bk');
    const snapshot = (parseJson((await agyctl(['backup', '--to', bk, '--json'], sandbox)).stdout) as any).snapshot
      .path as string;
    await s.prompt(id, 'two');

    const refused = await agyctl(['restore', snapshot], sandbox);
    expect(refused.exitCode).toBe(6);
    expect(refused.stderr).toMatch(/Refusing to restore/);
    expect(refused.stderr).toContain(String(s.child.pid));

    const forced = await agyctl(['restore', snapshot, '--force', '--json'], sandbox);
    expect(forced.exitCode).toBe(0);
    const result = (parseJson(forced.stdout) as any).restore.sessions[0];
    expect(result.restored).toBe(true);
    expect(fs.existsSync(result.preRestore)).toBe(true);
    expect(query(result.preRestore, 'SELECT count(*) AS n FROM steps')).toEqual([{ n: 4 }]); // both turns, taken before the swap
    await s.stop();
    expect(query(path.join(sandbox.stateDir, 'conversations', `${id}.db`), 'SELECT count(*) AS n FROM steps')).toEqual([
      { n: 2 },
    ]);
  });
});
