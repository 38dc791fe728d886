/**
 * `--prove`: restored conversations shown to load in a real server. One fresh
 * server (the caller's start options: the box's settings and credentials,
 * pointed at the state dir that holds the restored files), `session/load` of
 * each session, the replayed history counted and compared with the
 * snapshot, `session/close`, server stopped (withServer stops it on every
 * path). Only loads: no session is created, no prompt sent, so the probe
 * leaves no new conversation behind.
 *
 * What "matches" means: RC01 replays a loaded conversation as one
 * user_message_chunk and one agent_message_chunk (full text) per turn, and
 * writes one gen_metadata row per turn, so a session whose manifest counts
 * N gen_metadata rows must replay N user and N agent messages.
 */
import type { Connection } from '../acp/connection.js';
import { type StartOptions, withServer } from '../acp/lifecycle.js';
import { closeSession, loadSession } from '../acp/protocol.js';
import { countUpdates } from '../check/updates.js';
import { errorText } from './files.js';
import type { ManifestSession } from './manifest.js';

export interface ProvedSession {
  id: string;
  ok: boolean;
  loaded: boolean;
  expectedMessages: number;
  replayed: { user: number; agent: number } | null;
  problem?: string;
}

export interface ProveReport {
  ok: boolean;
  stateDir: string;
  /** True when the sessions were loaded from a scratch copy (`backup verify --prove`). */
  scratch?: boolean;
  sessions: ProvedSession[];
}

export interface ProveInput {
  sessions: ManifestSession[];
  stateDir: string;
  start: StartOptions;
  /** Per call (initialize has its own in `start`). */
  callTimeoutMs: number;
  signal: AbortSignal;
  /** The cwd to load a session with when its manifest has none. */
  fallbackCwd: string;
}

export const expectedMessages = (s: Pick<ManifestSession, 'rows'>): number => s.rows?.gen_metadata ?? 0;

async function proveOne(conn: Connection, s: ManifestSession, input: ProveInput): Promise<ProvedSession> {
  const expected = expectedMessages(s);
  const counter = countUpdates(conn, s.id);
  const call = { timeoutMs: input.callTimeoutMs, signal: input.signal };
  try {
    await loadSession(conn, s.id, s.cwd ?? input.fallbackCwd, call);
  } catch (err) {
    counter.stop();
    if (input.signal.aborted) throw err;
    return {
      id: s.id,
      ok: false,
      loaded: false,
      expectedMessages: expected,
      replayed: null,
      problem: `session/load failed: ${errorText(err)}`,
    };
  }
  counter.stop();
  const replayed = { user: counter.count('user_message_chunk'), agent: counter.count('agent_message_chunk') };
  try {
    await closeSession(conn, s.id, call);
  } catch {
    // some builds lack session/close; the server is stopped right after anyway
  }
  const ok = replayed.user === expected && replayed.agent === expected;
  const problem = ok
    ? undefined
    : `replayed ${replayed.user} user and ${replayed.agent} agent messages; the snapshot holds ${expected} turn(s) (gen_metadata rows)`;
  return { id: s.id, ok, loaded: true, expectedMessages: expected, replayed, ...(problem ? { problem } : {}) };
}

export async function proveSessions(input: ProveInput): Promise<ProveReport> {
  const sessions = await withServer(input.start, async ({ server }) => {
    const out: ProvedSession[] = [];
    for (const s of input.sessions) out.push(await proveOne(server.connection, s, input));
    return out;
  });
  return { ok: sessions.every((s) => s.ok), stateDir: input.stateDir, sessions };
}
