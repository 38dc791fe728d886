/**
 * `--prove`: restored conversations shown to load in a real server. One fresh
 * server (the caller's start options), `session/load` of each session, what
 * it replays digested (replay-record.ts), `session/close`, server stopped
 * (withServer stops it on every path). Only loads: no session is created, no
 * prompt sent, so the probe leaves no new conversation behind.
 *
 * The verdict, per session:
 *  - with a recorded replay (replay.json, written by an earlier
 *    `backup verify --prove`): the replay must be identical to it;
 *  - without one: it must load and replay at least one user and one agent
 *    message, the user's first. Whether that is the whole history is not
 *    known (the reference gives no count to compare with; table rows are
 *    not turns), so the report says the history was not compared.
 *  - a session that loads and replays nothing, with no record of messages,
 *    is empty (a session created and never prompted): nothing to compare,
 *    not a failure.
 */
import type { Connection } from '../acp/connection.js';
import { type StartOptions, withServer } from '../acp/lifecycle.js';
import { closeSession, loadSession } from '../acp/protocol.js';
import { serverText } from '../acp/redact.js';
import { errorText } from './error-text.js';
import type { ManifestSession } from './manifest.js';
import {
  DigestBuilder,
  describeDifference,
  firstDifference,
  type ReplayDigest,
  type ReplayedMessage,
  type Role,
  unrecordedProblem,
} from './replay-record.js';

/** `identical` / `differs`: compared with a recorded replay; `not-compared`: there was none for this session; `empty`: it loaded and replayed no message (nothing to compare), as its record says or without one. */
export type HistoryVerdict = 'identical' | 'differs' | 'not-compared' | 'empty';

export interface ProvedSession {
  id: string;
  ok: boolean;
  loaded: boolean;
  replayed: { user: number; agent: number; sha256: string } | null;
  history: HistoryVerdict;
  /** The recorded replay it was compared with. */
  recorded?: { user: number; agent: number; sha256: string };
  /** The first message (counted from 1) that differs from the recorded replay. */
  differsFrom?: number;
  /** Deprecated (always null): the old proof compared with the manifest's gen_metadata rows, a count the reference does not define. */
  expectedMessages: null;
  problem?: string;
}

export interface ProveReport {
  ok: boolean;
  stateDir: string;
  /** True when the sessions were loaded from a scratch copy (`backup verify --prove`). */
  scratch?: boolean;
  /** What the replays were compared with (replay.json of the snapshot). */
  replay: ReplayComparison;
  /** The server build that replayed (initialize's agentInfo.version), redacted; null when it did not say. */
  server: string | null;
  notes: string[];
  /** Scratch proofs: the box's settings/token files that changed while the scratch server ran (any is a failure). */
  credentials?: { changed: string[] };
  sessions: ProvedSession[];
}

/** What a scratch proof recorded in the snapshot's replay.json (prove-snapshot.ts). */
export interface ReplayRecorded {
  /** Set by `backup verify --prove` when it wrote (or extended) replay.json. */
  written?: { file: string; sessions: number } | null;
  /** Why nothing was recorded although it would have been (the snapshot directory is not ours, read-only). */
  notWritten?: string;
}

export interface ReplayComparison extends ReplayRecorded {
  /** `recorded`: compared with the snapshot's replay.json; `none`: it has none; `damaged`: it has one that cannot be trusted (exit 6); `newer`: written by a newer agyctl, not compared. */
  status: 'recorded' | 'none' | 'damaged' | 'newer';
  file: string | null;
  problem?: string;
}

/** How one session is loaded and replayed (replayOne): the proof's and `sessions export`'s. */
export interface ReplayCall {
  /** Per call (initialize has its own in the server's start options). */
  callTimeoutMs: number;
  signal: AbortSignal;
  /** The cwd to load a session with when its manifest has none. */
  fallbackCwd: string;
  /** Every replayed message, in order (sessions export); the proof itself keeps only digests. */
  onMessage?: (sessionId: string, m: ReplayedMessage) => void;
}

export interface ProveInput extends ReplayCall {
  sessions: ManifestSession[];
  stateDir: string;
  start: StartOptions;
  /** The recorded replay of each session that has one. */
  recorded: Map<string, ReplayDigest>;
  /** Before each session is loaded (progress). */
  onSession?: (sessionId: string, index: number) => void;
}

export const NOT_COMPARED_NOTE = 'history not compared: no replay recorded (run backup verify --prove)';
/** The same sessions when this very run recorded their replay (backup --prove, backup verify --prove). */
export const RECORDED_NOW_NOTE =
  'history not compared this time (no replay was recorded yet); recorded now for the next proof';

export interface LoadedReplay {
  id: string;
  digest: ReplayDigest | null;
  problem?: string;
}

/** session/load of one session; the digest of what it replayed, or why it did not load. */
export async function replayOne(conn: Connection, s: ManifestSession, input: ReplayCall): Promise<LoadedReplay> {
  const builder = new DigestBuilder();
  const stop = onReplayedMessages(conn, s.id, (m) => {
    builder.add(m);
    input.onMessage?.(s.id, m);
  });
  const call = { timeoutMs: input.callTimeoutMs, signal: input.signal };
  try {
    await loadSession(conn, s.id, s.cwd ?? input.fallbackCwd, call);
  } catch (err) {
    if (input.signal.aborted) throw err;
    return { id: s.id, digest: null, problem: `session/load failed: ${errorText(err)}` };
  } finally {
    stop();
  }
  try {
    await closeSession(conn, s.id, call);
  } catch {
    // some builds lack session/close; the server is stopped right after anyway
  }
  return { id: s.id, digest: builder.finish() };
}

/** The verdict on one loaded (or not) session. */
export function judge(loaded: LoadedReplay, recorded: ReplayDigest | undefined): ProvedSession {
  const base = { id: loaded.id, expectedMessages: null };
  const d = loaded.digest;
  if (!d)
    return {
      ...base,
      ok: false,
      loaded: false,
      replayed: null,
      history: 'not-compared',
      problem: loaded.problem ?? 'did not load',
    };
  const replayed = { user: d.user, agent: d.agent, sha256: d.sha256 };
  if (d.user + d.agent === 0 && (!recorded || recorded.user + recorded.agent === 0))
    return { ...base, ok: true, loaded: true, replayed, history: 'empty' };
  if (!recorded) {
    const problem = unrecordedProblem(d);
    return { ...base, ok: !problem, loaded: true, replayed, history: 'not-compared', ...(problem ? { problem } : {}) };
  }
  const recordedView = { user: recorded.user, agent: recorded.agent, sha256: recorded.sha256 };
  const at = firstDifference(d, recorded);
  if (at === undefined)
    return { ...base, ok: true, loaded: true, replayed, history: 'identical', recorded: recordedView };
  return {
    ...base,
    ok: false,
    loaded: true,
    replayed,
    history: 'differs',
    recorded: recordedView,
    differsFrom: at + 1,
    problem: describeDifference(d, recorded, at),
  };
}

export interface ProveRun {
  sessions: ProvedSession[];
  /** Digests of the sessions that loaded, for a record. */
  digests: Map<string, ReplayDigest>;
  server: string | null;
}

export async function proveSessions(input: ProveInput): Promise<ProveRun> {
  return withServer(input.start, async ({ server, init }) => {
    const sessions: ProvedSession[] = [];
    const digests = new Map<string, ReplayDigest>();
    for (const [i, s] of input.sessions.entries()) {
      input.onSession?.(s.id, i);
      const loaded = await replayOne(server.connection, s, input);
      if (loaded.digest) digests.set(s.id, loaded.digest);
      sessions.push(judge(loaded, input.recorded.get(s.id)));
    }
    const version = init.agentInfo?.version;
    return {
      sessions,
      digests,
      server: typeof version === 'string' ? serverText(version, { singleLine: true }) : null,
    };
  });
}

const KINDS: Record<string, Role> = { user_message_chunk: 'user', agent_message_chunk: 'agent' };

function contentText(content: unknown): string {
  const c = content as { type?: unknown; text?: unknown } | null | undefined;
  if (c && c.type === 'text' && typeof c.text === 'string') return c.text;
  return JSON.stringify(content ?? null);
}

/** Calls `onMessage` for each replayed user/agent message of `sessionId` until stopped. */
export function onReplayedMessages(
  conn: Connection,
  sessionId: string,
  onMessage: (m: ReplayedMessage) => void,
): () => void {
  const stop = conn.onNotification((method, params) => {
    if (method !== 'session/update') return;
    const p = params as { sessionId?: unknown; update?: { sessionUpdate?: unknown; content?: unknown } } | undefined;
    if (p?.sessionId !== sessionId || typeof p.update?.sessionUpdate !== 'string') return;
    const role = KINDS[p.update.sessionUpdate];
    if (role) onMessage({ role, text: contentText(p.update.content) });
  });
  return () => void stop();
}
