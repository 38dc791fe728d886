/**
 * `restore SNAP --dry-run`: what a restore would do, changing nothing. For
 * each chosen session: replaced (a database is there now) or added, with the
 * sizes on both sides; the state dir's other conversations are kept; which
 * processes hold any target open (a real restore would refuse), and whether
 * the snapshot's files still match their manifest hashes.
 */
import path from 'node:path';
import { conversationFiles } from '../core/paths.js';
import { findServersFor, holders } from '../util/procfs.js';
import { discoverSessions } from './discover.js';
import { errorText, identityOf, sha256File } from './files.js';
import type { ManifestSession } from './manifest.js';

export interface PlannedSession {
  id: string;
  action: 'replace' | 'add';
  /** The database file in the snapshot. */
  snapshotBytes: number;
  /** db + WAL in the state dir now (0 when added). */
  currentBytes: number;
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
  /** Whether a real restore would refuse (a process holds a target). */
  wouldRefuse: boolean;
}

/** `label` names the snapshot in the report (a directory, or the archive it was unpacked from into `dir`). */
export function planRestore(label: string, stateDir: string, chosen: ManifestSession[], dir: string): RestorePlan {
  const found = holders(
    chosen.flatMap((s) => [conversationFiles(stateDir, s.id).db, conversationFiles(stateDir, s.id).wal]),
  );
  const sessions = chosen.map((s): PlannedSession => {
    const f = conversationFiles(stateDir, s.id);
    const db = identityOf(f.db);
    const wal = identityOf(f.wal);
    const openBy = [...new Set([...(found.get(f.db) ?? []), ...(found.get(f.wal) ?? [])])].sort((a, b) => a - b);
    return {
      id: s.id,
      action: db ? 'replace' : 'add',
      snapshotBytes: s.bytes,
      currentBytes: (db?.size ?? 0) + (wal?.size ?? 0),
      openBy,
    };
  });
  const ids = new Set(chosen.map((s) => s.id));
  const kept = (discoverSessions(stateDir) ?? [])
    .filter((s) => !ids.has(s.id))
    .map((s) => ({ id: s.id, bytes: s.bytes }));
  return {
    snapshot: label,
    stateDir,
    sessions,
    kept,
    servers: findServersFor(stateDir).map((p) => p.pid),
    damaged: damagedFiles(dir, chosen),
    wouldRefuse: sessions.some((s) => s.openBy.length > 0),
  };
}

function damagedFiles(dir: string, sessions: ManifestSession[]): string[] {
  const bad: string[] = [];
  for (const s of sessions) {
    for (const f of [
      { file: s.file, sha256: s.sha256 },
      ...(s.meta ? [{ file: s.meta.file, sha256: s.meta.sha256 }] : []),
    ]) {
      try {
        if (sha256File(path.join(dir, f.file)) !== f.sha256) bad.push(`${f.file} does not match its manifest hash`);
      } catch (err) {
        bad.push(`${f.file}: ${errorText(err)}`);
      }
    }
  }
  return bad;
}
