/**
 * `agyctl probe --assumptions`: each fact of docs/assumptions.md that this
 * box can show, as held, differs or unknown. The state dir is only read.
 * The server runs in a scratch state dir (0700, removed on every exit path)
 * that borrows the box's settings.json and token by symlink (never a copy),
 * so it never opens the live conversations; it signs nothing in and creates
 * no session. Only when the box has credentials are existing
 * conversations (the smallest first, at most three, until one has
 * messages) copied there, as backup copies them, and loaded to see how
 * history replays.
 */
import fs from 'node:fs';
import { AcpError } from '../acp/acp-error.js';
import type { Connection } from '../acp/connection.js';
import { type StartOptions, withServer } from '../acp/lifecycle.js';
import {
  classifyAuthError,
  closeSession,
  type InitializeResult,
  loadSession,
  supportsLogout,
} from '../acp/protocol.js';
import { snapshotDb } from '../backup/backup-session.js';
import { discoverSessions, type SessionInfo } from '../backup/discover.js';
import { errorText } from '../backup/error-text.js';
import { scratchStateDir } from '../backup/prove-scratch.js';
import { withScratchDir } from '../backup/scratch-dir.js';
import { SyncBatch } from '../backup/snapshot-files.js';
import { WorkerPool } from '../backup/worker-pool.js';
import { conversationFiles, stateFiles } from '../core/paths.js';
import { AUTH_TYPE_INFO, normalizeAuthType, rawAuthType, readSettings } from '../settings/index.js';
import { copyFileNoFollow } from '../util/os/safe-fs.js';
import { type Assumption, type AssumptionVerdict, differs, held, unknown } from './assumption.js';
import { stateDirAssumptions } from './assumptions-state.js';
import { fingerprintState, type StateFingerprint, sameState } from './state-fingerprint.js';

/** RC01's four auth method ids (the reference's initialize result). */
const RC01_AUTH_METHODS = ['oauth-personal', 'oauth-business', 'gemini-api-key', 'agent-platform'];
const COPY_BUSY_BUDGET_MS = 5_000;

export interface AssumptionsInput {
  stateDir: string;
  now: number;
  /** Each server call's deadline (initialize's comes with `startOptions`). */
  callTimeoutMs: number;
  /** Where the scratch state dir goes (the OS temp dir). */
  scratchRoot: string;
  signal: AbortSignal;
  /** Start options for a server on `stateDir`; `onStdoutNoise` gets each non-JSON stdout line (redacted). */
  startOptions(stateDir: string, onStdoutNoise: (line: string) => void): StartOptions;
}

/** What the probe found: the server, the conversation it loaded, and each assumption's verdict. */
export interface AssumptionsFound {
  server: string;
  /** The conversation loaded (a copy of it, in the scratch state dir), or null. */
  loadedSession: string | null;
  assumptions: Assumption[];
}

export interface AssumptionsReport extends AssumptionsFound {
  counts: Record<AssumptionVerdict, number>;
  /** The live state dir before and after, compared by name, size, mtime and inode of every entry. */
  stateDir: { path: string; unchanged: boolean };
}

export async function probeAssumptions(input: AssumptionsInput): Promise<AssumptionsReport> {
  const before = fingerprintState(input.stateDir);
  const rows = stateDirAssumptions(input.stateDir, input.now);
  const candidates = loadCandidates(input.stateDir);
  let server = '';
  let loadedSession: string | null = null;
  await withScratchDir(input.scratchRoot, 'agyctl-assumptions-', async (root) => {
    // The box's settings and token as private copies; the fingerprint below notices any change to the originals.
    const scratch = scratchStateDir(root, input.stateDir).stateDir;
    const noise: string[] = [];
    const options = input.startOptions(scratch, (line) => noise.push(line));
    server = options.command.display;
    await withServer(options, async ({ server: running, init, initMs }) => {
      rows.push(...initAssumptions(init, initMs, input.callTimeoutMs));
      const outcome = await replayFirstWithMessages(running.connection, candidates, input, scratch);
      rows.push(...outcome.rows);
      loadedSession = outcome.loaded;
    });
    rows.push(stdoutRow(noise));
  });
  return report({ server, loadedSession, assumptions: rows }, input.stateDir, before);
}

/** At most this many conversations are loaded to find one with messages (empty ones say nothing about replay). */
const MAX_LOADS = 3;

/**
 * Loads candidates in order until one replays messages: an empty
 * conversation (created, never prompted) shows how session/load is called
 * but nothing about how history replays, so with only empty ones the
 * replay facts stay unknown.
 */
async function replayFirstWithMessages(
  conn: Connection,
  candidates: SessionInfo[] | string,
  input: AssumptionsInput,
  scratch: string,
): Promise<{ rows: Assumption[]; loaded: string | null }> {
  if (typeof candidates === 'string') return { rows: replayUnknown(candidates), loaded: null };
  let empty: string | null = null;
  for (const candidate of candidates.slice(0, MAX_LOADS)) {
    const copied = await copySession(input, candidate, scratch);
    if (typeof copied === 'string') return { rows: replayUnknown(copied), loaded: null };
    const outcome = await loadAndWatch(conn, copied, input);
    if (outcome.messages > 0 || !outcome.loaded)
      return { rows: outcome.rows, loaded: outcome.loaded ? copied.id : null };
    empty = copied.id;
  }
  const why = `the conversation(s) loaded replayed no message (empty, e.g. ${empty}): nothing to judge the replay by`;
  return { rows: [held('load.params', REPLAY_FACTS.load), ...replayUnknown(why).slice(1)], loaded: empty };
}

/** The report, with the verdicts counted and the live state dir compared with its fingerprint from before. */
function report(found: AssumptionsFound, stateDir: string, before: StateFingerprint): AssumptionsReport {
  const counts: Record<AssumptionVerdict, number> = { held: 0, differs: 0, unknown: 0 };
  for (const r of found.assumptions) counts[r.verdict] += 1;
  return {
    server: found.server,
    loadedSession: found.loadedSession,
    assumptions: found.assumptions,
    counts,
    stateDir: { path: stateDir, unchanged: sameState(before, fingerprintState(stateDir)) },
  };
}

/** The box has credentials the server would use: an OAuth type with its token file, or a type that needs none on disk. */
function hasCredentials(stateDir: string): boolean {
  const type = normalizeAuthType(rawAuthType(readSettings(stateDir, { noFollow: true }).data))?.type;
  if (!type) return false;
  return AUTH_TYPE_INFO[type].oauth ? fs.existsSync(stateFiles(stateDir).token) : true;
}

/** Readable conversations, smallest first; or why none is loaded. */
function loadCandidates(stateDir: string): SessionInfo[] | string {
  if (!hasCredentials(stateDir)) return 'no credentials on this box (nothing is signed in by a probe)';
  const readable = (discoverSessions(stateDir, { holders: false }) ?? []).filter((s) => s.readable);
  if (readable.length === 0) return 'no conversation to load (a probe creates none)';
  return readable.sort((a, b) => a.bytes - b.bytes);
}

/**
 * The conversation's database and .meta, copied into the scratch state dir.
 * The database is copied as backup copies it (a private copy of its files,
 * checked to be one state, its WAL checkpointed into it), which opens
 * nothing in the live dir, whether or not a server holds it.
 */
async function copySession(input: AssumptionsInput, s: SessionInfo, scratch: string): Promise<SessionInfo | string> {
  const from = conversationFiles(input.stateDir, s.id);
  const to = conversationFiles(scratch, s.id);
  try {
    await copyDatabase(from.db, to.db);
    if (fs.existsSync(from.meta)) copyFileNoFollow(from.meta, to.meta, 0o600);
    return s;
  } catch (err) {
    return `the conversation could not be copied: ${errorText(err)}`;
  }
}

/** One database, copied as backup copies it a single session (the copy and the hash here, the check in a worker). */
async function copyDatabase(source: string, dest: string): Promise<void> {
  const pool = new WorkerPool(1, { oneSession: true });
  const sync = new SyncBatch();
  try {
    await snapshotDb(source, dest, { busyBudgetMs: COPY_BUSY_BUDGET_MS }, { pool, sync });
    await sync.flush();
  } finally {
    await pool.close();
  }
}

/** agyctl's deadlines assume a start-up of seconds (RC01: 5-6 s): more than half the --timeout is a start-up they do not fit. */
function initAssumptions(init: InitializeResult, initMs: number, timeoutMs: number): Assumption[] {
  const ids = Array.isArray(init.authMethods) ? init.authMethods.map((m) => String(m?.id)) : [];
  const missing = RC01_AUTH_METHODS.filter((m) => !ids.includes(m));
  const name = init.agentInfo?.name;
  const caps = init.agentCapabilities;
  const fact = {
    protocol: 'initialize answers protocolVersion 1',
    name: 'initialize names the server agentInfo.name "antigravity-acp" (how agyctl picks the profile)',
    methods: `authMethods advertises ${RC01_AUTH_METHODS.join(', ')}`,
    load: 'agentCapabilities.loadSession is true (session/load replays history)',
    logout: 'agentCapabilities.auth.logout is advertised (logout over the protocol)',
    start: 'the server answers initialize within seconds, well inside --timeout (RC01: 5-6 s; default 60 s)',
  };
  return [
    init.protocolVersion === 1
      ? held('init.protocol-version', fact.protocol)
      : differs(
          'init.protocol-version',
          fact.protocol,
          `protocolVersion ${JSON.stringify(init.protocolVersion ?? null)}`,
        ),
    name === 'antigravity-acp'
      ? held('init.agent-name', fact.name)
      : differs('init.agent-name', fact.name, `agentInfo.name ${JSON.stringify(name ?? null)}`),
    missing.length === 0
      ? held('init.auth-methods', fact.methods)
      : differs(
          'init.auth-methods',
          fact.methods,
          `missing ${missing.join(', ')}; advertised: ${ids.join(', ') || 'none'}`,
        ),
    caps?.loadSession === true
      ? held('init.load-session', fact.load)
      : differs('init.load-session', fact.load, `loadSession ${JSON.stringify(caps?.loadSession ?? null)}`),
    supportsLogout(init) ? held('init.logout', fact.logout) : differs('init.logout', fact.logout, 'no auth.logout'),
    initMs <= timeoutMs / 2
      ? held('start.time', fact.start, `${initMs} ms`)
      : differs('start.time', fact.start, `${initMs} ms from spawn to the initialize answer, over half of --timeout`),
  ];
}

function stdoutRow(noise: string[]): Assumption {
  const fact = "the server's stdout carries only JSON-RPC lines";
  return noise.length === 0
    ? held('start.stdout-json', fact)
    : differs('start.stdout-json', fact, `${noise.length} other line(s), e.g. ${noise[0]!.slice(0, 80)}`);
}

const REPLAY_FACTS = {
  load: 'session/load takes {sessionId, cwd, mcpServers} and works without authenticate after a restart',
  pairs: 'a loaded session replays its history as user_message_chunk / agent_message_chunk pairs, in turn order',
  full: 'each replayed message arrives as one chunk (full text)',
};

function replayUnknown(why: string): Assumption[] {
  return [
    unknown('load.params', REPLAY_FACTS.load, why),
    unknown('replay.pairs', REPLAY_FACTS.pairs, why),
    unknown('replay.full-text', REPLAY_FACTS.full, why),
  ];
}

async function loadAndWatch(
  conn: Connection,
  s: SessionInfo,
  input: AssumptionsInput,
): Promise<{ rows: Assumption[]; loaded: boolean; messages: number }> {
  const kinds: Array<'user' | 'agent'> = [];
  const stop = conn.onNotification((method, params) => {
    const p = params as { sessionId?: unknown; update?: { sessionUpdate?: unknown } } | undefined;
    if (method !== 'session/update' || p?.sessionId !== s.id) return;
    if (p.update?.sessionUpdate === 'user_message_chunk') kinds.push('user');
    if (p.update?.sessionUpdate === 'agent_message_chunk') kinds.push('agent');
  });
  const call = { timeoutMs: input.callTimeoutMs, signal: input.signal };
  try {
    await loadSession(conn, s.id, s.cwd ?? input.scratchRoot, call);
  } catch (err) {
    if (!(err instanceof AcpError)) throw err;
    const auth = classifyAuthError(err);
    const rows = auth
      ? replayUnknown(`session/load: the server did not accept the credentials (${err.serverMessage})`)
      : [differs('load.params', REPLAY_FACTS.load, err.message), ...replayUnknown('session/load failed').slice(1)];
    return { rows, loaded: false, messages: 0 };
  } finally {
    stop();
  }
  await closeSession(conn, s.id, call).catch(() => undefined);
  return { rows: [held('load.params', REPLAY_FACTS.load), ...replayRows(kinds)], loaded: true, messages: kinds.length };
}

/** Runs of one kind are messages; more chunks than runs means a message came in pieces. */
function replayRows(kinds: Array<'user' | 'agent'>): Assumption[] {
  const runs = kinds.filter((k, i) => i === 0 || kinds[i - 1] !== k);
  const users = kinds.filter((k) => k === 'user').length;
  const seen = `${users} user and ${kinds.length - users} agent chunk(s) in ${runs.length} message(s)`;
  const paired = runs.length >= 2 && runs[0] === 'user' && users > 0 && users < kinds.length;
  return [
    paired ? held('replay.pairs', REPLAY_FACTS.pairs, seen) : differs('replay.pairs', REPLAY_FACTS.pairs, seen),
    kinds.length === runs.length
      ? held('replay.full-text', REPLAY_FACTS.full)
      : differs('replay.full-text', REPLAY_FACTS.full, seen),
  ];
}
