/**
 * replay.json: what a fresh server replayed for each session of a snapshot,
 * recorded by `backup verify --prove` (and `backup --prove`) beside
 * manifest.json, so later proofs compare history instead of guessing it.
 * Its own file, not a manifest field: snapshots are complete before any
 * proof runs, and older snapshots simply have none.
 *
 * Integrity: the record carries the sha256 of manifest.json (it belongs to
 * this snapshot and no other), the manifest's sha256 of each session's
 * database (the replay is of that file), and a sha256 of its own content
 * (`sha256` = sha256 of the JSON text of every other field, in the order
 * written). Any mismatch is a damaged record: verify and --prove exit 6,
 * and the file is never overwritten (delete it to record anew).
 * Shape: docs/json.md ("replay.json").
 *
 * What a server replays when it loads a session: the reference says one
 * `user_message_chunk` and one `agent_message_chunk` (full text) per turn,
 * in order. Each such chunk is one message here; nothing is merged or
 * reordered, so the digest describes exactly what the server sent.
 *
 * The digest: counts per role, the roles in order (`u`/`a`), a sha256 over
 * the whole replay, and a short hash per message (to name the first message
 * that differs). Encoding, fixed because it is stored (replay.json):
 * each message contributes `<role> <byte length of text>\n<text>\n` to the
 * whole-replay sha256, and `sha256("<role>\n<text>")` cut to 16 hex digits
 * is its own hash. A non-text content block counts with its JSON as text.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { agyctlVersion } from '../core/runtime.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { sha256, sha256File } from '../util/os/file-hash.js';
import { assertPrivateDir, readFileNoFollow } from '../util/os/safe-fs.js';
import { SESSION_ID } from './discover.js';
import { REPLAY_RECORD } from './layout.js';
import { MANIFEST, type Manifest } from './manifest.js';

export type Role = 'user' | 'agent';

export interface ReplayedMessage {
  role: Role;
  text: string;
}

export interface ReplayDigest {
  user: number;
  agent: number;
  /** Roles in order, one letter each: `u` user, `a` agent. */
  order: string;
  /** sha256 of the replayed text in order (encoding above). */
  sha256: string;
  /** Per message, the first 16 hex digits of its own sha256. */
  messages: string[];
}

/** Builds a ReplayDigest message by message (memory: 16 hex digits per message, never the text). */
export class DigestBuilder {
  private readonly whole = crypto.createHash('sha256');
  private readonly digest: Omit<ReplayDigest, 'sha256'> = { user: 0, agent: 0, order: '', messages: [] };

  add(m: ReplayedMessage): void {
    const text = Buffer.from(m.text, 'utf8');
    this.whole.update(`${m.role} ${text.length}\n`).update(text).update('\n');
    this.digest[m.role] += 1;
    this.digest.order += m.role === 'user' ? 'u' : 'a';
    this.digest.messages.push(
      crypto.createHash('sha256').update(`${m.role}\n`).update(text).digest('hex').slice(0, 16),
    );
  }

  finish(): ReplayDigest {
    return { ...this.digest, sha256: this.whole.digest('hex') };
  }
}

/** The first message (0-based) at which two replays differ, or undefined when they are the same. */
export function firstDifference(a: ReplayDigest, b: ReplayDigest): number | undefined {
  const n = Math.min(a.messages.length, b.messages.length);
  for (let i = 0; i < n; i += 1) if (a.order[i] !== b.order[i] || a.messages[i] !== b.messages[i]) return i;
  if (a.messages.length !== b.messages.length || a.sha256 !== b.sha256) return n;
  return undefined;
}

const roleAt = (d: ReplayDigest, i: number): string =>
  d.order[i] === 'u' ? 'user' : d.order[i] === 'a' ? 'agent' : 'none';

/** One line saying how `replayed` differs from `recorded` (counts, or text from message N on; N counted from 1). */
export function describeDifference(replayed: ReplayDigest, recorded: ReplayDigest, at: number): string {
  const where =
    at < replayed.messages.length && at < recorded.messages.length
      ? `message ${at + 1} (${roleAt(replayed, at)}) differs from the recorded one`
      : at < recorded.messages.length
        ? `message ${at + 1} (${roleAt(recorded, at)}) and what follows were not replayed`
        : `message ${at + 1} (${roleAt(replayed, at)}) on were replayed but not recorded`;
  if (replayed.user !== recorded.user || replayed.agent !== recorded.agent)
    return `replayed ${replayed.user} user and ${replayed.agent} agent messages; the recorded replay has ${recorded.user} and ${recorded.agent}: ${where}`;
  return `the replayed text differs from the recorded replay from message ${at + 1} on: ${where}`;
}

/**
 * What can honestly be shown without a record: the session replayed at
 * least one user and one agent message, and the first one is the user's
 * (a turn starts with what was asked). undefined when it holds.
 */
export function unrecordedProblem(d: ReplayDigest): string | undefined {
  if (d.user === 0 || d.agent === 0)
    return `loaded, but replayed ${d.user} user and ${d.agent} agent messages; a proof needs at least one of each`;
  if (d.order[0] !== 'u') return 'loaded, but the replay starts with an agent message, not in turn order';
  return undefined;
}

export const REPLAY_SCHEMA = 1;

export interface RecordedSession extends ReplayDigest {
  id: string;
  /** The manifest's sha256 of the database the replay came from. */
  db: string;
  recorded: string;
}

export interface ReplayRecord {
  kind: 'agyctl-replay';
  schemaVersion: number;
  agyctlVersion: string;
  /** The server build that replayed (initialize's agentInfo.version), when it said. */
  server: string | null;
  manifestSha256: string;
  sessions: RecordedSession[];
}

/** A record that exists and cannot be trusted (or read): exit 6 wherever it is used. */
export class ReplayRecordError extends Error {}
/** A record a newer agyctl wrote: not an error, but this agyctl cannot compare with it. */
export class NewerReplayRecordError extends ReplayRecordError {}

const HEX64 = /^[0-9a-f]{64}$/;
const HEX16 = /^[0-9a-f]{16}$/;

function manifestSha256(dir: string): string {
  return sha256File(path.join(dir, MANIFEST));
}

function sealed(body: ReplayRecord): string {
  return `${JSON.stringify({ ...body, sha256: sha256(JSON.stringify(body)) }, null, 2)}\n`;
}

function validSession(s: unknown): s is RecordedSession {
  const r = s as Partial<RecordedSession> | null;
  const count = (n: unknown): boolean => Number.isSafeInteger(n) && (n as number) >= 0;
  return (
    !!r &&
    typeof r.id === 'string' &&
    SESSION_ID.test(r.id) &&
    typeof r.db === 'string' &&
    HEX64.test(r.db) &&
    typeof r.sha256 === 'string' &&
    HEX64.test(r.sha256) &&
    count(r.user) &&
    count(r.agent) &&
    typeof r.order === 'string' &&
    /^[ua]*$/.test(r.order) &&
    r.order.length === (r.user as number) + (r.agent as number) &&
    [...r.order].filter((c) => c === 'u').length === r.user &&
    Array.isArray(r.messages) &&
    r.messages.length === r.order.length &&
    r.messages.every((m) => typeof m === 'string' && HEX16.test(m))
  );
}

/**
 * The snapshot's record, checked against itself and its manifest; undefined
 * when the snapshot has none (older snapshots, never proved). A record of a
 * newer schema throws NewerReplayRecordError (history is then not compared).
 */
export function readReplayRecord(dir: string, manifest: Manifest): ReplayRecord | undefined {
  const file = path.join(dir, REPLAY_RECORD);
  let text: string;
  try {
    text = readFileNoFollow(file).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ReplayRecordError(`${REPLAY_RECORD} is unreadable: ${(err as Error).message}`);
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ReplayRecordError(`${REPLAY_RECORD} is not valid JSON`);
  }
  if (!parsed || typeof parsed !== 'object' || parsed.kind !== 'agyctl-replay')
    throw new ReplayRecordError(`${REPLAY_RECORD} is not an agyctl replay record`);
  if (typeof parsed.schemaVersion === 'number' && parsed.schemaVersion > REPLAY_SCHEMA)
    throw new NewerReplayRecordError(
      `${REPLAY_RECORD} has schemaVersion ${parsed.schemaVersion}; this agyctl reads ${REPLAY_SCHEMA} (use a newer agyctl)`,
    );
  const { sha256: seal, ...body } = parsed;
  if (typeof seal !== 'string' || seal !== sha256(JSON.stringify(body)))
    throw new ReplayRecordError(`${REPLAY_RECORD} does not match its own sha256 (edited or damaged)`);
  const record = body as unknown as ReplayRecord;
  if (!Array.isArray(record.sessions) || !record.sessions.every(validSession))
    throw new ReplayRecordError(`${REPLAY_RECORD} has a malformed session entry`);
  if (record.manifestSha256 !== manifestSha256(dir))
    throw new ReplayRecordError(`${REPLAY_RECORD} was recorded for another ${MANIFEST} (its sha256 differs)`);
  for (const r of record.sessions) {
    const s = manifest.sessions.find((m) => m.id === r.id);
    if (!s) throw new ReplayRecordError(`${REPLAY_RECORD} records ${r.id}, which the manifest does not list`);
    if (s.sha256 !== r.db)
      throw new ReplayRecordError(`${REPLAY_RECORD} records ${r.id} for another database (its sha256 differs)`);
  }
  return record;
}

/**
 * Writes (atomically, 0600) a record holding `previous`'s sessions plus
 * `added`. The snapshot directory must still be the private directory of
 * ours it was made as; otherwise nothing is written and the error says why.
 */
export function writeReplayRecord(
  dir: string,
  previous: ReplayRecord | undefined,
  added: Array<{ id: string; db: string; digest: ReplayDigest }>,
  server: string | null,
): ReplayRecord {
  assertPrivateDir(dir);
  const now = new Date().toISOString();
  const kept = (previous?.sessions ?? []).filter((s) => !added.some((a) => a.id === s.id));
  const record: ReplayRecord = {
    kind: 'agyctl-replay',
    schemaVersion: REPLAY_SCHEMA,
    agyctlVersion: agyctlVersion(),
    server: server ?? previous?.server ?? null,
    manifestSha256: manifestSha256(dir),
    sessions: [
      ...kept,
      ...added.map((a) => ({
        id: a.id,
        db: a.db,
        recorded: now,
        user: a.digest.user,
        agent: a.digest.agent,
        order: a.digest.order,
        sha256: a.digest.sha256,
        messages: a.digest.messages,
      })),
    ],
  };
  writeFileAtomic(path.join(dir, REPLAY_RECORD), sealed(record), { mode: 0o600, exactMode: true });
  return record;
}

/** A recorded session as a digest (what a replay is compared with). */
export const recordedDigest = (s: RecordedSession): ReplayDigest => ({
  user: s.user,
  agent: s.agent,
  order: s.order,
  sha256: s.sha256,
  messages: s.messages,
});
