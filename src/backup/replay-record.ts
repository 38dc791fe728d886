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
 */
import path from 'node:path';
import { agyctlVersion } from '../core/version.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { sha256, sha256File } from '../util/os/file-hash.js';
import { assertPrivateDir, readFileNoFollow } from '../util/os/safe-fs.js';
import { SESSION_ID } from './discover.js';
import { MANIFEST, type Manifest } from './manifest.js';
import type { ReplayDigest } from './replay.js';

export const REPLAY_RECORD = 'replay.json';
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
