// SQLite conversation databases, shaped like RC01's
// ~/.gemini/antigravity-acp/conversations/<uuid>.db (+ <uuid>.meta).
//
// The quirk that matters to agyctl's backup code: the server keeps each DB
// open in WAL mode and (as far as observed) never checkpoints while running,
// so the main .db file stays a bare header and schema + rows live in the
// -wal file. wal_autocheckpoint=0 reproduces that: a copy of the .db file
// alone reads no tables. better-sqlite3 checkpoints when the last connection
// closes, so a connection is closed only on session/close (or on EOF with
// AGY_SIM_CHECKPOINT_ON_EXIT=1); a plain exit leaves the WAL in place.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { TablesShape } from './config.js';
import { brainDir, conversationDb, conversationMeta, isSessionId, type StatePaths } from './paths.js';

/** The seven tables of RC01's snapshot DDL, verbatim. */
export const SCHEMA_DDL = [
  'CREATE TABLE `trajectory_meta` (`trajectory_id` text,`cascade_id` text,`trajectory_type` integer,`source` integer,PRIMARY KEY (`trajectory_id`))',
  'CREATE TABLE `steps` (`idx` integer,`step_type` integer NOT NULL DEFAULT 0,`status` integer NOT NULL DEFAULT 0,`has_subtrajectory` numeric NOT NULL DEFAULT false,`metadata` blob,`error_details` blob,`permissions` blob,`task_details` blob,`render_info` blob,`step_payload` blob,`step_format` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))',
  'CREATE TABLE `gen_metadata` (`idx` integer,`data` blob,`size` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))',
  'CREATE TABLE `executor_metadata` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
  'CREATE TABLE `parent_references` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
  'CREATE TABLE `trajectory_metadata_blob` (`id` text DEFAULT "main",`data` blob,PRIMARY KEY (`id`))',
  'CREATE TABLE `battle_mode_infos` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
];

/**
 * AGY_SIM_TABLES=other: a server that keeps the same history in other
 * tables. No gen_metadata, an extra table, and three steps per
 * turn (a planning step between question and answer), so table row counts
 * say nothing about turns.
 */
const OTHER_SCHEMA_DDL = [
  ...SCHEMA_DDL.filter((ddl) => !ddl.includes('`gen_metadata`')),
  'CREATE TABLE `turn_checkpoints` (`idx` integer,`step_idx` integer,`data` blob,PRIMARY KEY (`idx`))',
];
const STEP_SIM_PLANNING = 3;

/** Sim-chosen step_type values (RC01's real enum is opaque to us). */
export const STEP_USER_INPUT = 1;
export const STEP_AGENT_RESPONSE = 2;
export const STEP_SIM_FILLER = 99;
const STATUS_DONE = 3;

export interface Turn {
  user: string;
  agent: string | undefined;
}

function jsonBlob(v: unknown): Buffer {
  return Buffer.from(JSON.stringify(v), 'utf8');
}

/** Where the SQLite addon comes from when better-sqlite3 cannot find its own (the single executable carries one). */
let sqliteAddon: (() => object) | undefined;

/** Open databases with this addon instead of better-sqlite3's file lookup; called before the simulator runs. */
export function useSqliteAddon(addon: () => object): void {
  sqliteAddon = addon;
}

function openWal(path: string, mustExist: boolean): Database.Database {
  const binding = sqliteAddon ? { nativeBinding: sqliteAddon() as unknown as string } : {};
  const db = new Database(path, { fileMustExist: mustExist, ...binding });
  db.pragma('journal_mode = WAL');
  // Never checkpoint while open (see file comment).
  db.pragma('wal_autocheckpoint = 0');
  return db;
}

/** RC01 writes `{"cwd"}`; AGY_SIM_META_SHAPE gives the shapes a later build might write instead. */
function metaText(shape: StatePaths['metaShape'], cwd: string): string | undefined {
  if (shape === 'none') return undefined;
  if (shape === 'renamed') return JSON.stringify({ workspace: { path: cwd } });
  if (shape === 'extended') return JSON.stringify({ cwd, title: 'sim session', createdAt: new Date().toISOString() });
  return JSON.stringify({ cwd });
}

/** The cwd a .meta records: RC01's `cwd`, or the renamed shape's `workspace.path`. */
function metaCwd(meta: unknown): string {
  if (!meta || typeof meta !== 'object') return '';
  const m = meta as { cwd?: unknown; workspace?: { path?: unknown } };
  if (typeof m.cwd === 'string') return m.cwd;
  return typeof m.workspace?.path === 'string' ? m.workspace.path : '';
}

export class ConversationDb {
  private constructor(
    private readonly db: Database.Database,
    private readonly tables: TablesShape = 'rc01',
  ) {}

  static create(paths: StatePaths, sessionId: string, cwd: string, tables: TablesShape = 'rc01'): ConversationDb {
    mkdirSync(paths.conversations, { recursive: true });
    const db = openWal(conversationDb(paths, sessionId), false);
    db.transaction(() => {
      for (const ddl of tables === 'other' ? OTHER_SCHEMA_DDL : SCHEMA_DDL) db.exec(ddl);
      db.prepare('INSERT INTO trajectory_meta VALUES (?, ?, ?, ?)').run(sessionId, sessionId, 1, 1);
      db.prepare('INSERT INTO trajectory_metadata_blob (id, data) VALUES (?, ?)').run(
        'main',
        jsonBlob({ cwd, createdAt: new Date().toISOString(), simulator: true }),
      );
    })();
    const meta = metaText(paths.metaShape, cwd);
    if (meta !== undefined) writeFileSync(conversationMeta(paths, sessionId), meta);
    return new ConversationDb(db, tables);
  }

  /** undefined when no such conversation exists (or it is not one of ours). */
  static open(paths: StatePaths, sessionId: string): ConversationDb | undefined {
    const path = conversationDb(paths, sessionId);
    if (!isSessionId(sessionId) || !existsSync(path)) return undefined;
    const db = openWal(path, true);
    const hasSteps = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'steps'").get();
    if (!hasSteps) {
      db.close();
      return undefined;
    }
    const rc01 = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'gen_metadata'").get();
    return new ConversationDb(db, rc01 ? 'rc01' : 'other');
  }

  private nextIdx(table: 'steps' | 'gen_metadata' | 'turn_checkpoints'): number {
    const row = this.db.prepare(`SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM ${table}`).get() as { n: number };
    return row.n;
  }

  private insertStep(stepType: number, payload: Buffer): void {
    this.db
      .prepare(
        'INSERT INTO steps (idx, step_type, status, metadata, step_payload, step_format) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(this.nextIdx('steps'), stepType, STATUS_DONE, jsonBlob({ createdAt: new Date().toISOString() }), payload, 1);
  }

  /** One prompt turn: user step, agent step and a gen_metadata row, in one commit (AGY_SIM_TABLES=other: see OTHER_SCHEMA_DDL). */
  appendTurn(user: string, agent: string, model: string): void {
    if (this.tables === 'other') {
      this.appendOtherTurn(user, agent, model);
      return;
    }
    this.db.transaction(() => {
      this.insertStep(STEP_USER_INPUT, jsonBlob({ type: 'user_input', text: user }));
      this.insertStep(STEP_AGENT_RESPONSE, jsonBlob({ type: 'agent_response', text: agent }));
      const data = jsonBlob({ model, userChars: user.length, agentChars: agent.length });
      this.db
        .prepare('INSERT INTO gen_metadata (idx, data, size) VALUES (?, ?, ?)')
        .run(this.nextIdx('gen_metadata'), data, data.length);
    })();
  }

  private appendOtherTurn(user: string, agent: string, model: string): void {
    this.db.transaction(() => {
      const first = this.nextIdx('steps');
      this.insertStep(STEP_USER_INPUT, jsonBlob({ type: 'user_input', text: user }));
      this.insertStep(STEP_SIM_PLANNING, jsonBlob({ type: 'planning', model }));
      this.insertStep(STEP_AGENT_RESPONSE, jsonBlob({ type: 'agent_response', text: agent }));
      for (const step of [first, first + 2])
        this.db
          .prepare('INSERT INTO turn_checkpoints (idx, step_idx, data) VALUES (?, ?, ?)')
          .run(this.nextIdx('turn_checkpoints'), step, jsonBlob({ model }));
    })();
  }

  /** Opaque filler write (AGY_SIM_WRITE_INTERVAL_MS): random bytes, so nothing compresses it away. */
  appendFiller(bytes: number): void {
    this.insertStep(STEP_SIM_FILLER, randomBytes(bytes));
  }

  history(): Turn[] {
    const rows = this.db
      .prepare('SELECT step_type, step_payload FROM steps WHERE step_type IN (?, ?) ORDER BY idx')
      .all(STEP_USER_INPUT, STEP_AGENT_RESPONSE) as Array<{ step_type: number; step_payload: Buffer | null }>;
    const turns: Turn[] = [];
    for (const row of rows) {
      let text = '';
      try {
        const parsed = JSON.parse((row.step_payload ?? Buffer.alloc(0)).toString('utf8')) as { text?: unknown };
        text = typeof parsed.text === 'string' ? parsed.text : '';
      } catch {
        continue; // not ours; skip rather than break the replay
      }
      if (row.step_type === STEP_USER_INPUT) turns.push({ user: text, agent: undefined });
      else if (turns.length > 0 && turns[turns.length - 1]!.agent === undefined) turns[turns.length - 1]!.agent = text;
    }
    return turns;
  }

  /** Closing the last connection checkpoints the WAL into the main file. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}

export interface StoredSession {
  sessionId: string;
  cwd: string;
  updatedAt: string;
}

/** Conversations on disk, newest first, for session/list. */
export function listConversations(paths: StatePaths): StoredSession[] {
  let names: string[];
  try {
    names = readdirSync(paths.conversations);
  } catch {
    return [];
  }
  const out: StoredSession[] = [];
  for (const name of names) {
    if (!name.endsWith(paths.dbSuffix)) continue;
    const sessionId = name.slice(0, -paths.dbSuffix.length);
    if (!isSessionId(sessionId)) continue;
    let cwd = '';
    try {
      cwd = metaCwd(JSON.parse(readFileSync(conversationMeta(paths, sessionId), 'utf8')));
    } catch {
      // a .db without .meta still lists, with an empty cwd
    }
    const dbPath = conversationDb(paths, sessionId);
    let mtime = statSync(dbPath).mtimeMs;
    try {
      mtime = Math.max(mtime, statSync(`${dbPath}-wal`).mtimeMs);
    } catch {
      // no WAL (checkpointed)
    }
    out.push({ sessionId, cwd, updatedAt: new Date(mtime).toISOString() });
  }
  return out.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** A leading `/plan` writes the plan into the session's brain directory, as the real server does. */
export function writePlan(paths: StatePaths, sessionId: string, text: string): void {
  const m = /^\s*\/plan\b\s*(.*)$/s.exec(text);
  if (!m) return;
  const dir = brainDir(paths, sessionId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'implementation_plan.md'), `# Implementation plan\n\n${m[1]}\n`, { mode: 0o600 });
}
