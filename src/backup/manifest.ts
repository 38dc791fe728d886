/** manifest.json: what a snapshot holds and how to check it. Its shape is documented in docs/backup.md. */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';
import type { FileIdentity } from './files.js';
import { SESSION_ID } from './discover.js';

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

export class ManifestError extends Error {}

export function writeManifest(dir: string, manifest: Manifest): void {
  writeFileAtomic(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600, followSymlink: false });
}

/** Read and sanity-check a manifest; ManifestError with a one-line reason otherwise. */
export function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST);
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ManifestError(code === 'ENOENT' ? `${dir} has no ${MANIFEST}` : `${file} is unreadable: ${(err as Error).message}`);
  }
  return checkManifest(parsed, file);
}

/** The same checks for a manifest that arrived some other way (an archive); `file` names it in errors. */
export function checkManifest(parsed: unknown, file: string): Manifest {
  const m = parsed as Partial<Manifest> | null;
  if (!m || m.kind !== 'agyctl-backup' || typeof m.schemaVersion !== 'number' || !Array.isArray(m.sessions)) {
    throw new ManifestError(`${file} is not an agyctl backup manifest`);
  }
  if (m.schemaVersion > MANIFEST_SCHEMA) throw new ManifestError(`${file} has schemaVersion ${m.schemaVersion}; this agyctl reads ${MANIFEST_SCHEMA}`);
  for (const s of m.sessions) {
    const bad = !s || typeof s.id !== 'string' || !SESSION_ID.test(s.id) || typeof s.sha256 !== 'string' || !plainName(s.file) || (s.meta != null && !plainName(s.meta.file));
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
