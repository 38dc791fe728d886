/** `agyctl backup verify SNAPSHOT`: every file (databases, .meta, brain files) re-hashed, databases integrity-checked, against the manifest. */
import fs from 'node:fs';
import path from 'node:path';
import { sha256File } from '../util/os/file-hash.js';
import { brainEntryName } from './brain.js';
import { errorText } from './error-text.js';
import { REPLAY_RECORD } from './layout.js';
import { type FileDigest, type Manifest, type ManifestSession, readManifest } from './manifest.js';
import { NewerReplayRecordError, ReplayRecordError, readReplayRecord } from './replay-record.js';
import { integrityCheck, openReadOnly, rowCounts } from './sqlite.js';

export interface VerifiedSession {
  id: string;
  file: string;
  ok: boolean;
  problems: string[];
}

export interface VerifyReport {
  snapshot: string;
  created: string;
  ok: boolean;
  sessions: VerifiedSession[];
  /** Sessions the backup run itself could not snapshot (listed in the manifest, not a mismatch). */
  failedAtBackup: Array<{ id: string; reason: string }>;
  /** The snapshot's recorded replay (replay.json), checked like its other files; null when it has none. */
  replay: RecordCheck | null;
}

export interface RecordCheck {
  file: string;
  /** False when the record does not match itself or the manifest (exit 6); a newer agyctl's record is ok, unchecked. */
  ok: boolean;
  /** Sessions it records (0 when it cannot be read). */
  sessions: number;
  problem?: string;
  note?: string;
}

/** Re-hashes and checks the snapshot in `dir`; proving it (--prove) is the handler's next step. */
export function verifySnapshot(dir: string): VerifyReport {
  const manifest = readManifest(dir);
  const sessions = manifest.sessions.map((s) => verifyOne(dir, s));
  const replay = checkRecord(dir, manifest);
  return {
    snapshot: dir,
    created: manifest.created,
    ok: sessions.every((s) => s.ok) && replay?.ok !== false,
    sessions,
    failedAtBackup: manifest.failed,
    replay,
  };
}

function checkRecord(dir: string, manifest: Manifest): RecordCheck | null {
  const file = path.join(dir, REPLAY_RECORD);
  try {
    const record = readReplayRecord(dir, manifest);
    return record ? { file, ok: true, sessions: record.sessions.length } : null;
  } catch (err) {
    if (err instanceof NewerReplayRecordError) return { file, ok: true, sessions: 0, note: err.message };
    if (err instanceof ReplayRecordError) return { file, ok: false, sessions: 0, problem: err.message };
    throw err;
  }
}

function verifyOne(dir: string, s: ManifestSession): VerifiedSession {
  const problems: string[] = [];
  const file = path.join(dir, s.file);
  if (checkFile(file, s, problems)) checkDatabase(file, s, problems);
  if (s.meta) checkFile(path.join(dir, s.meta.file), s.meta, problems);
  for (const f of s.brain?.files ?? []) {
    const name = brainEntryName(s.id, f.path);
    checkFile(path.join(dir, ...name.split('/')), f, problems, name);
  }
  return { id: s.id, file: s.file, ok: problems.length === 0, problems };
}

/** `file` against what the manifest says of it (`expected`); what differs goes into `problems`. */
function checkFile(
  file: string,
  { bytes, sha256 }: FileDigest,
  problems: string[],
  name = path.basename(file),
): boolean {
  let size: number;
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile()) {
      problems.push(`${name}: not a regular file`);
      return false;
    }
    size = st.size;
  } catch (err) {
    problems.push(`${name}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : errorText(err)}`);
    return false;
  }
  if (size !== bytes) problems.push(`${name}: ${size} bytes, manifest says ${bytes}`);
  const actual = sha256File(file);
  if (actual !== sha256) problems.push(`${name}: sha256 ${actual} does not match the manifest's ${sha256}`);
  return true;
}

function checkDatabase(file: string, s: ManifestSession, problems: string[]): void {
  const name = path.basename(file);
  try {
    const db = openReadOnly(file, 0);
    try {
      const integrity = integrityCheck(db);
      if (integrity !== 'ok') problems.push(`${name}: integrity_check: ${integrity}`);
      const rows = rowCounts(db);
      for (const [table, n] of Object.entries(s.rows ?? {})) {
        if (rows[table] !== n)
          problems.push(`${name}: table ${table} has ${rows[table] ?? 'no'} rows, manifest says ${n}`);
      }
    } finally {
      db.close();
    }
  } catch (err) {
    problems.push(`${name}: ${errorText(err)}`);
  }
}
