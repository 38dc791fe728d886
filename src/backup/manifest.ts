/** manifest.json: what a snapshot holds and how to check it. Its shape is documented in docs/backup.md. */
import path from 'node:path';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { assertPrivateDir, readFileNoFollow } from '../util/safe-fs.js';
import { SESSION_ID } from './discover.js';
import type { FileIdentity } from './files.js';

export const MANIFEST = 'manifest.json';
export const MANIFEST_SCHEMA = 1;

export interface ManifestFile {
  file: string;
  bytes: number;
  sha256: string;
}

export interface ManifestSession extends ManifestFile {
  id: string;
  cwd: string | null;
  integrity: string;
  rows: Record<string, number>;
  /** The `.meta` file copied beside the database; null when the source had none. */
  meta: ManifestFile | null;
  /** True when the database file was hard-linked (or copied) from `reusedFrom` instead of vacuumed again. */
  reused: boolean;
  reusedFrom?: string;
  /** The source files as they were just before the snapshot (what the next run compares). */
  source: { db: FileIdentity; wal: FileIdentity | null; checkedAt: string };
}

export interface ManifestFailure {
  id: string;
  reason: string;
}

export interface Manifest {
  schemaVersion: number;
  kind: 'agyctl-backup';
  created: string;
  host: string;
  agyctlVersion: string;
  sourceStateDir: string;
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
      typeof s.sha256 !== 'string' ||
      !plainName(s.file) ||
      (s.meta != null && !plainName(s.meta.file));
    if (bad) {
      throw new ManifestError(`${file} has a malformed session entry`);
    }
  }
  return { ...m, failed: Array.isArray(m.failed) ? m.failed : [] } as Manifest;
}

/** Files named in a manifest stay inside the snapshot directory: no separators, no `..`. */
function plainName(name: unknown): boolean {
  return typeof name === 'string' && name.length > 0 && path.basename(name) === name && name !== '..' && name !== '.';
}
