/** manifest.json: what a snapshot holds and how to check it. Its shape is documented in docs/backup.md. */
import path from 'node:path';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { assertPrivateDir, readFileNoFollow } from '../util/os/safe-fs.js';
import { brainEntryName, type ManifestBrain, validBrainPath } from './brain.js';
import { SESSION_ID } from './discover.js';
import type { FileIdentity } from './file-identity.js';

export const MANIFEST = 'manifest.json';
/** 2 added `brain` to sessions; a schemaVersion 1 manifest reads as sessions with no brain files recorded. */
export const MANIFEST_SCHEMA = 2;

/** What a snapshot's manifest says of each file it holds (brain files too): its size and hash. */
export interface FileDigest {
  bytes: number;
  sha256: string;
}

export interface ManifestFile extends FileDigest {
  file: string;
}

export interface ManifestSession extends ManifestFile {
  id: string;
  cwd: string | null;
  integrity: string;
  rows: Record<string, number>;
  /** The `.meta` file copied beside the database; null when the source had none. */
  meta: ManifestFile | null;
  /**
   * How the database file was made: false, the checked private copy of the live files itself (its WAL
   * checkpointed into it); true, compacted from it with VACUUM INTO (free pages above the threshold, or
   * --compact). Absent in manifests written before copies became snapshots: those were all compacted.
   */
  compacted?: boolean;
  /** True when the database file was hard-linked (or copied) from `reusedFrom` instead of vacuumed again. */
  reused: boolean;
  reusedFrom?: string;
  /** The source files as they were just before the snapshot (what the next run compares). */
  source: { db: FileIdentity; wal: FileIdentity | null; checkedAt: string };
  /** The session's brain/<id>/ files, under `brain/<id>/` in the snapshot; null when it had none, absent before schemaVersion 2. */
  brain?: ManifestBrain | null;
}

export interface ManifestFailure {
  id: string;
  reason: string;
}

/** Which state dir a snapshot is of, as its manifest records it (source.ts). */
export interface ManifestSource {
  host: string;
  sourceStateDir: string;
  /** The state dir's realpath and its owner's uid (with `host`: which state dir this is a snapshot of). Absent before they were recorded: an unknown source. */
  sourceRealpath?: string;
  sourceUid?: number;
}

export interface Manifest extends ManifestSource {
  schemaVersion: number;
  kind: 'agyctl-backup';
  created: string;
  agyctlVersion: string;
  sessions: ManifestSession[];
  failed: ManifestFailure[];
}

/**
 * Why a manifest cannot be used. `damaged` (not JSON, malformed entries) is
 * a snapshot that was one and broke (exit 6, snapshot-damaged); the others
 * are the wrong directory or the wrong agyctl (exit 2).
 */
export type ManifestProblem = 'missing' | 'unreadable' | 'damaged' | 'foreign' | 'newer';

export class ManifestError extends Error {
  constructor(
    message: string,
    readonly problem: ManifestProblem = 'damaged',
  ) {
    super(message);
  }
}

/** The AgyError for a manifest that cannot be used (one mapping for verify and restore). */
export function manifestAgyError(err: ManifestError, dir: string): AgyError {
  if (err.problem === 'damaged') {
    return new AgyError(EXIT.findings, 'snapshot-damaged', `The snapshot is damaged: ${err.message}.`, {
      hint: `restore from another snapshot (its data files may still be intact; \`agyctl backup verify\` checks another one)`,
      details: { snapshot: dir },
    });
  }
  if (err.problem === 'unreadable')
    return usageError(err.message, 'fix the permissions of the snapshot directory, or run as its owner');
  if (err.problem === 'newer') return usageError(err.message, 'use a newer agyctl to read this snapshot');
  return usageError(err.message, 'give a directory that `agyctl backup` created');
}

export function writeManifest(dir: string, manifest: Manifest): void {
  assertPrivateDir(dir); // the run's own work dir, not something swapped in for it
  writeFileAtomic(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600, exactMode: true });
}

/** Read and sanity-check a manifest; ManifestError with a one-line reason otherwise. */
export function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST);
  let text: string;
  try {
    text = readFileNoFollow(file).toString('utf8'); // a planted link or FIFO is not a manifest
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ManifestError(`${dir} has no ${MANIFEST}`, 'missing');
    throw new ManifestError(`${file} is unreadable: ${(err as Error).message}`, 'unreadable');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(`${file} is not valid JSON (${(err as Error).message})`, 'damaged');
  }
  return checkManifest(parsed, file);
}

/** The same checks for a manifest that arrived some other way (an archive); `file` names it in errors. */
export function checkManifest(parsed: unknown, file: string): Manifest {
  const m = parsed as Partial<Manifest> | null;
  if (!m || typeof m !== 'object' || m.kind !== 'agyctl-backup')
    throw new ManifestError(`${file} is not an agyctl backup manifest`, 'foreign');
  if (typeof m.schemaVersion !== 'number' || !Array.isArray(m.sessions))
    throw new ManifestError(`${file} has no schemaVersion or sessions list`, 'damaged');
  if (m.schemaVersion > MANIFEST_SCHEMA)
    throw new ManifestError(
      `${file} has schemaVersion ${m.schemaVersion}; this agyctl reads ${MANIFEST_SCHEMA}`,
      'newer',
    );
  for (const s of m.sessions) {
    const bad =
      !s ||
      typeof s.id !== 'string' ||
      !SESSION_ID.test(s.id) ||
      !sizedAndHashed(s) ||
      !plainName(s.file) ||
      (s.meta != null && (!plainName(s.meta.file) || !sizedAndHashed(s.meta))) ||
      (s.brain != null && !wellFormedBrain(s.id, s.brain));
    if (bad || !boundedSessionFields(s)) {
      throw new ManifestError(`${file} has a malformed session entry`);
    }
  }
  const failed = Array.isArray(m.failed) ? m.failed : [];
  if (!failed.every(wellFormedFailure)) throw new ManifestError(`${file} has a malformed failed entry`);
  if (!boundedSource(m))
    throw new ManifestError(`${file} has a malformed source (sourceStateDir, host, sourceRealpath or sourceUid)`);
  return { ...m, failed } as Manifest;
}

/** Longest text field a manifest may carry (a path, a reason): what a user's side sends root is bounded. */
export const MANIFEST_TEXT_MAX = 4096;

const boundedText = (v: unknown, max = MANIFEST_TEXT_MAX): boolean => typeof v === 'string' && v.length <= max;
const count = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

/** A file's size is a count of bytes and its hash a sha256 in hex, as agyctl writes them: nothing else is compared or shown. */
const SHA256_HEX = /^[0-9a-f]{64}$/;
const sizedAndHashed = (f: { bytes?: unknown; sha256?: unknown }): boolean =>
  count(f.bytes) && typeof f.sha256 === 'string' && SHA256_HEX.test(f.sha256);

/** Texts are bounded strings, row counts are counts, a cwd is a path or null (sizes and hashes: archive-read.ts and verify.ts). */
function boundedSessionFields(s: ManifestSession): boolean {
  if (s.cwd != null && !boundedText(s.cwd)) return false;
  if (s.integrity !== undefined && !boundedText(s.integrity)) return false;
  if (s.compacted !== undefined && typeof s.compacted !== 'boolean') return false;
  if (s.rows !== undefined && (typeof s.rows !== 'object' || s.rows === null || !Object.values(s.rows).every(count)))
    return false;
  const skipped = s.brain?.skipped ?? [];
  return skipped.length <= 100_000 && skipped.every((k) => k && boundedText(k.path) && boundedText(k.reason));
}

function wellFormedFailure(f: unknown): boolean {
  const e = f as Partial<ManifestFailure> | null;
  return !!e && typeof e === 'object' && boundedText(e.id, 256) && boundedText(e.reason);
}

function boundedSource(m: Partial<Manifest>): boolean {
  return (
    (m.sourceStateDir === undefined || boundedText(m.sourceStateDir)) &&
    (m.host === undefined || boundedText(m.host, 255)) &&
    (m.sourceRealpath === undefined || boundedText(m.sourceRealpath)) &&
    (m.sourceUid === undefined || count(m.sourceUid))
  );
}

/** Files named in a manifest stay inside the snapshot directory: no separators, no `..`. */
function plainName(name: unknown): boolean {
  return typeof name === 'string' && name.length > 0 && path.basename(name) === name && name !== '..' && name !== '.';
}

/** Brain paths stay inside brain/<id>/ of the snapshot: plain segments, bounded depth, each named once. */
function wellFormedBrain(id: string, brain: ManifestBrain): boolean {
  if (typeof brain !== 'object' || !Array.isArray(brain.files) || !Array.isArray(brain.skipped)) return false;
  const seen = new Set<string>();
  for (const f of brain.files) {
    if (!f || !validBrainPath(id, f.path) || !sizedAndHashed(f)) return false;
    if (seen.has(f.path)) return false;
    seen.add(f.path);
  }
  // A file may not also be a directory of another (a/b and a/b/c).
  return brain.files.every((f) => {
    const parts = f.path.split('/');
    return parts.slice(1).every((_, i) => !seen.has(parts.slice(0, i + 1).join('/')));
  });
}

/** Every file of a session in a snapshot (names relative to the snapshot directory, '/'-separated), with its manifest size and hash. */
export function sessionFiles(s: ManifestSession): Array<{ name: string; bytes: number; sha256: string }> {
  return [
    { name: s.file, bytes: s.bytes, sha256: s.sha256 },
    ...(s.meta ? [{ name: s.meta.file, bytes: s.meta.bytes, sha256: s.meta.sha256 }] : []),
    ...(s.brain?.files ?? []).map((f) => ({ name: brainEntryName(s.id, f.path), bytes: f.bytes, sha256: f.sha256 })),
  ];
}
