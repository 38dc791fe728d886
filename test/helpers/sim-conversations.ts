/**
 * Conversations as the simulator stores them, written directly with its own
 * store (src/sim/store.ts): a box with settings, a token and sessions of N
 * turns, without running a server. `session/load` in the simulator replays
 * exactly these turns.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TablesShape } from '../../src/sim/config.js';
import { statePaths } from '../../src/sim/paths.js';
import { ConversationDb } from '../../src/sim/store.js';
import { makeSandbox, type Sandbox } from './cli.js';

/** A sandbox whose state dir has settings.json and a (fake) token, so the simulator is signed in. */
export function authedSandbox(extraEnv: NodeJS.ProcessEnv = {}): Sandbox {
  const sb = makeSandbox(extraEnv);
  fs.mkdirSync(sb.stateDir, { recursive: true });
  fs.writeFileSync(path.join(sb.stateDir, 'settings.json'), JSON.stringify({ auth: { type: 'oauth-personal' } }));
  fs.writeFileSync(
    path.join(sb.stateDir, 'acp_token.json'),
    JSON.stringify({ access_token: 'ya29.fixture', refresh_token: '1//fixture', token_type: 'Bearer', expiry_date: 1 }),
    { mode: 0o600 },
  );
  return sb;
}

/**
 * A closed (checkpointed) conversation with `turns` prompt turns (plus `fillerKb` of opaque steps); returns its id.
 * `tables: 'other'` writes them as AGY_SIM_TABLES=other does (no gen_metadata, three steps per turn, an extra table).
 */
export function addConversation(
  sb: Sandbox,
  turns: number,
  cwd = '/work/sim',
  fillerKb = 0,
  tables: TablesShape = 'rc01',
): string {
  const id = crypto.randomUUID();
  const db = ConversationDb.create(statePaths({ HOME: sb.home }), id, cwd, tables);
  for (let i = 0; i < turns; i += 1) db.appendTurn(`question ${i}`, `answer ${i}`, 'gemini-3.7-flash-high');
  for (let kb = 0; kb < fillerKb; kb += 20) db.appendFiller(20 * 1024);
  db.close();
  return id;
}

/** Names and sha256 of every file in a directory (what "changes nothing" compares). */
export function dirState(dir: string): Record<string, string> {
  if (!fs.existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    out[name] = st.isFile()
      ? `${st.mtimeMs}:${crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`
      : st.isSymbolicLink()
        ? 'symlink'
        : 'dir';
  }
  return out;
}
