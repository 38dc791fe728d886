/**
 * `restore SNAP --dry-run`: what a restore would do, changing nothing. For
 * each chosen session: replaced (a database is there now) or added, with the
 * sizes on both sides; the state dir's other conversations are kept; which
 * processes hold any target open (a real restore would refuse), and whether
 * the snapshot's files still match their manifest hashes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { conversationFiles } from '../core/paths.js';
import { copyFileNoFollow, lstatOrNull } from '../util/os/safe-fs.js';
import { findServersFor, holders } from '../util/procfs.js';
import { brainHoldsSnapshot } from './brain.js';
import { discoverSessions } from './discover.js';
import { identityOf } from './file-identity.js';
import type { ManifestSession } from './manifest.js';
import { brainFilesNow, mismatchedFiles, type RestoreOptions } from './restore.js';
import { makeScratchDir } from './scratch-dir.js';
import { holdsSnapshotContent, openReadWrite, type SnapshotDbFile } from './sqlite.js';

export interface PlannedSession {
  id: string;
  action: 'replace' | 'add';
  /** The database file in the snapshot. */
  snapshotBytes: number;
  /** db + WAL in the state dir now (0 when added). */
  currentBytes: number;
  /**
   * replace: whether the database there holds the snapshot's content already (then the sizes differ only by the
   * WAL and compaction, and a restore keeps no pre-restore copy); null when added or when it cannot be read.
   */
  sameContent: boolean | null;
  /** Files the snapshot holds under brain/<id>/ (0: the current brain directory is left alone). */
  brainFiles: number;
  /** Regular files under brain/<id>/ now (kept beside it as a pre-restore copy when the snapshot has brain files). */
  currentBrainFiles: number;
  /** brain/<id>/ holds the snapshot's brain files already (a restore leaves it, with no pre-restore copy). */
  sameBrain: boolean;
  openBy: number[];
}

export interface RestorePlan {
  snapshot: string;
  stateDir: string;
  sessions: PlannedSession[];
  /** Conversations in the state dir the restore would not touch. */
  kept: Array<{ id: string; bytes: number }>;
  /** Server processes using this state dir (from /proc). */
  servers: number[];
  /** Snapshot files that no longer match the manifest (a real restore would stop with snapshot-damaged). */
  damaged: string[];
  /** Whether a real restore would refuse (a process holds a target, and no --force). */
  wouldRefuse: boolean;
}

/** The snapshot a restore is planned from. */
export interface PlannedFrom {
  /** The directory read. */
  snapshotDir: string;
  /** What the report names it: that directory, or the archive it was unpacked from. */
  shown: string;
  /** Its sessions the restore would put back. */
  sessions: ManifestSession[];
  /** Where the scratch copies that compare contents go (default: the system's temporary dir). */
  tmpRoot?: string;
}

/** `restore --dry-run`: what the restore's options (state dir, --force) would do with `snapshot`, nothing changed. */
export function planRestore({ stateDir, force }: RestoreOptions, snapshot: PlannedFrom): RestorePlan {
  const { snapshotDir: dir, sessions: chosen } = snapshot;
  const targets = (id: string): string[] => [
    conversationFiles(stateDir, id).db,
    conversationFiles(stateDir, id).wal,
    ...brainFilesNow(stateDir, id),
  ];
  const found = holders(chosen.flatMap((s) => targets(s.id)));
  const sessions = chosen.map((s): PlannedSession => {
    const f = conversationFiles(stateDir, s.id);
    const db = identityOf(f.db);
    const wal = identityOf(f.wal);
    const openBy = [...new Set(targets(s.id).flatMap((t) => found.get(t) ?? []))].sort((a, b) => a - b);
    return {
      id: s.id,
      action: db ? 'replace' : 'add',
      snapshotBytes: s.bytes,
      currentBytes: (db?.size ?? 0) + (wal?.size ?? 0),
      sameContent: db
        ? holdsContent(f.db, { file: path.join(dir, s.file), compacted: s.compacted }, snapshot.tmpRoot ?? os.tmpdir())
        : null,
      brainFiles: s.brain?.files.length ?? 0,
      currentBrainFiles: brainFilesNow(stateDir, s.id).length,
      sameBrain: Boolean(s.brain && s.brain.files.length > 0 && brainHoldsSnapshot(stateDir, s.id, s.brain)),
      openBy,
    };
  });
  const ids = new Set(chosen.map((s) => s.id));
  const kept = (discoverSessions(stateDir) ?? [])
    .filter((s) => !ids.has(s.id))
    .map((s) => ({ id: s.id, bytes: s.bytes }));
  return {
    snapshot: snapshot.shown,
    stateDir,
    sessions,
    kept,
    servers: findServersFor(stateDir).map((p) => p.pid),
    damaged: mismatchedFiles(dir, chosen),
    wouldRefuse: !force && sessions.some((s) => s.openBy.length > 0),
  };
}

/**
 * The database there (db and WAL, copied into a scratch dir: even a read-only SQLite connection writes the
 * -shm beside it, and a dry run changes nothing), compacted and compared with the snapshot's; null when unreadable.
 */
function holdsContent(db: string, snapshot: SnapshotDbFile, tmpRoot: string): boolean | null {
  const scratch = makeScratchDir(tmpRoot, 'agyctl-restore-');
  try {
    const copy = path.join(scratch, 'now.db');
    copyFileNoFollow(db, copy, 0o600);
    if (lstatOrNull(`${db}-wal`)) copyFileNoFollow(`${db}-wal`, `${copy}-wal`, 0o600);
    const conn = openReadWrite(copy, 0);
    try {
      conn.prepare('VACUUM INTO ?').run(path.join(scratch, 'compact.db'));
    } finally {
      conn.close();
    }
    return holdsSnapshotContent(path.join(scratch, 'compact.db'), snapshot, scratch);
  } catch {
    return null;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
