/**
 * What a state directory held before a probe, so the probe can leave it as
 * it was: the set of entries (relative paths, not contents), and
 * settings.json's exact bytes and mode. The token file is never read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../util/os/atomic-write.js';

/** A probe walks a state dir, not a home: bounded so an odd layout cannot stall it. */
const MAX_ENTRIES = 20_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A conversation's files: `<uuid>.db`, `-wal`, `-shm`, `.meta`, or the `brain/<uuid>` dir. */
const CONVERSATION_FILE = /^([0-9a-f-]{36})(?:\.db|\.db-wal|\.db-shm|\.meta)?$/i;

export interface StateSnapshot {
  dir: string;
  existed: boolean;
  entries: Set<string>;
  settingsFile: string;
  settings: { bytes: Buffer; mode: number } | undefined;
}

function listEntries(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (rel: string): void => {
    if (out.size >= MAX_ENTRIES) return;
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      const child = rel ? path.join(rel, d.name) : d.name;
      out.add(child);
      if (d.isDirectory() && !d.isSymbolicLink()) walk(child);
    }
  };
  walk('');
  return out;
}

function readSettingsBytes(file: string): StateSnapshot['settings'] {
  try {
    const st = fs.statSync(file);
    return { bytes: fs.readFileSync(file), mode: st.mode & 0o7777 };
  } catch {
    return undefined;
  }
}

export function snapshotState(dir: string, settingsFile: string): StateSnapshot {
  return {
    dir,
    existed: fs.existsSync(dir),
    entries: listEntries(dir),
    settingsFile,
    settings: readSettingsBytes(settingsFile),
  };
}

export interface SettingsOutcome {
  /** The bytes or mode changed (or the file appeared or vanished) while the server ran. */
  rewritten: boolean;
  /** settings.json existed before the probe (if not and rewritten: the server created it, and agyctl removed it). */
  existedBefore: boolean;
  /** The original bytes were put back (atomically), or a file the server created was removed. */
  restored: boolean;
}

/** settings.json back to its exact bytes, if the server rewrote it. */
export function restoreSettings(snap: StateSnapshot): SettingsOutcome {
  const now = readSettingsBytes(snap.settingsFile);
  const same =
    now === undefined
      ? snap.settings === undefined
      : snap.settings !== undefined && now.bytes.equals(snap.settings.bytes) && now.mode === snap.settings.mode;
  const existedBefore = snap.settings !== undefined;
  if (same) return { rewritten: false, existedBefore, restored: false };
  if (snap.settings === undefined) fs.rmSync(snap.settingsFile, { force: true });
  else {
    writeFileAtomic(snap.settingsFile, snap.settings.bytes, { mode: snap.settings.mode });
    fs.chmodSync(snap.settingsFile, snap.settings.mode);
  }
  return { rewritten: true, existedBefore, restored: true };
}

export interface StateOutcome {
  /** Probe-created conversation files removed (by UUID name only). */
  removed: string[];
  /** Entries that are new and were left alone (not a conversation's files): reported, never deleted. */
  left: string[];
  /** Entries that were there before and are gone (the probe cannot bring them back; it says so). */
  missing: string[];
  unchanged: boolean;
}

/** Remove what the probe's server created that is recognisably a conversation (UUID names only), and empty new directories. */
export function restoreState(snap: StateSnapshot): StateOutcome {
  const added = [...listEntries(snap.dir)].filter((e) => !snap.entries.has(e));
  const removed: string[] = [];
  const stat = (rel: string): fs.Stats | undefined => {
    try {
      return fs.lstatSync(path.join(snap.dir, rel));
    } catch {
      return undefined; // inside something already removed
    }
  };
  // Shallow first: a brain/<uuid> directory goes whole.
  for (const rel of [...added].sort((a, b) => a.length - b.length)) {
    const st = stat(rel);
    const id = CONVERSATION_FILE.exec(path.basename(rel))?.[1];
    if (!st || id === undefined || !UUID.test(id)) continue;
    if (st.isFile() || (st.isDirectory() && path.basename(path.dirname(rel)) === 'brain')) {
      fs.rmSync(path.join(snap.dir, rel), { recursive: true, force: true });
      removed.push(rel);
    }
  }
  // Deep first: new directories left empty go too; anything else stays and is reported.
  const left: string[] = [];
  for (const rel of [...added].sort((a, b) => b.length - a.length)) {
    const st = stat(rel);
    if (!st) continue;
    if (st.isDirectory() && fs.readdirSync(path.join(snap.dir, rel)).length === 0) {
      fs.rmdirSync(path.join(snap.dir, rel));
      removed.push(rel);
    } else left.push(rel);
  }
  if (!snap.existed && fs.existsSync(snap.dir) && fs.readdirSync(snap.dir).length === 0) fs.rmdirSync(snap.dir);
  const now = listEntries(snap.dir);
  const missing = [...snap.entries].filter((e) => !now.has(e)).sort();
  return { removed: removed.sort(), left: left.sort(), missing, unchanged: left.length === 0 && missing.length === 0 };
}
