/**
 * Root backing up a user's state dir reuses unchanged sessions as the
 * owner's own backups do, without reading the user's tree. Root tells the
 * owner's side what its previous snapshot of that state dir recorded
 * (`reuseHints`); the owner's side decides with the same identity rules
 * (backup-session.ts: canReuse) which sessions are unchanged and sends them
 * marked reused, without their database. Root trusts none of that
 * (`adoptReused`): a session marked reused must be one of root's previous
 * snapshot, with the identity and hash root recorded, and root's own file
 * must still hash to that; root then links its own file and keeps its own
 * record. Anything else and the caller asks for a full copy instead: a lie
 * can at worst make root copy again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sha256File } from '../util/os/file-hash.js';
import type { Previous } from './backup-session.js';
import { SESSION_ID } from './discover.js';
import { type FileIdentity, sameIdentity } from './file-identity.js';
import type { Manifest, ManifestSession } from './manifest.js';
import { linkOrCopy } from './snapshot-files.js';

/** What the owner's side is told of one session of root's previous snapshot (its own data: ids, sizes, hashes, file identities). */
export type ReuseHint = Pick<
  ManifestSession,
  'id' | 'file' | 'bytes' | 'sha256' | 'integrity' | 'rows' | 'compacted' | 'source'
>;

/** Sessions of root's previous snapshot that a run may reuse (integrity ok, source recorded). */
export function reuseHints(previous: Previous): ReuseHint[] {
  return [...previous.sessions.values()]
    .filter((s) => s.integrity === 'ok' && s.source)
    .map(({ id, file, bytes, sha256, integrity, rows, compacted, source }) => ({
      id,
      file,
      bytes,
      sha256,
      integrity,
      rows,
      ...(compacted === undefined ? {} : { compacted }),
      source,
    }));
}

const SHA256 = /^[0-9a-f]{64}$/;
/** At most this many hints are read (a bound on what the owner's side parses). */
const MAX_HINTS = 1_000_000;

/** The owner's side: root's hints as a Previous it cannot see the files of; throws on anything malformed. */
export function previousFromHints(parsed: unknown): Previous {
  const list = (parsed as { sessions?: unknown } | null)?.sessions;
  if (!Array.isArray(list) || list.length > MAX_HINTS) throw new Error('the reuse hints are not a list of sessions');
  const sessions = new Map<string, ManifestSession>();
  for (const h of list as ReuseHint[]) {
    const ok =
      h &&
      typeof h.id === 'string' &&
      SESSION_ID.test(h.id) &&
      h.file === `${h.id}.db` &&
      Number.isSafeInteger(h.bytes) &&
      typeof h.sha256 === 'string' &&
      SHA256.test(h.sha256) &&
      h.integrity === 'ok' &&
      typeof h.rows === 'object' &&
      h.rows !== null &&
      wellFormedSource(h.source);
    if (!ok) throw new Error('the reuse hints hold a malformed session');
    sessions.set(h.id, { ...h, cwd: null, meta: null, reused: false });
  }
  return { name: 'root', dir: '', sessions, remote: true };
}

function wellFormedSource(src: unknown): boolean {
  const s = src as ManifestSession['source'] | null;
  return !!s && identity(s.db) && (s.wal === null || identity(s.wal)) && !Number.isNaN(Date.parse(s.checkedAt));
}

function identity(f: unknown): f is FileIdentity {
  const i = f as FileIdentity | null;
  return (
    !!i &&
    typeof i.inode === 'string' &&
    /^\d{1,20}$/.test(i.inode) &&
    Number.isSafeInteger(i.size) &&
    typeof i.mtimeNs === 'string' &&
    /^\d{1,30}$/.test(i.mtimeNs)
  );
}

/**
 * Root's side: every session the owner's side sent as reused, checked
 * against root's previous snapshot and filled in from it (root's file linked
 * into `work`, root's hash, counts and integrity). False at the first claim
 * that does not hold (the caller then copies everything again); what was
 * linked stays in `work` for the caller to clear.
 */
export function adoptReused(manifest: Manifest, work: string, previous: Previous): boolean {
  for (const [i, s] of manifest.sessions.entries()) {
    if (s.reused !== true) continue;
    const prev = previous.sessions.get(s.id);
    if (!prev || !holdsUp(s, prev)) return false;
    const target = path.join(work, `${s.id}.db`);
    try {
      linkOrCopy(path.join(previous.dir, prev.file), target);
      if (fs.lstatSync(target).size !== prev.bytes || sha256File(target) !== prev.sha256) return false;
    } catch {
      return false;
    }
    const adopted: ManifestSession = {
      ...s,
      file: `${s.id}.db`,
      bytes: prev.bytes,
      sha256: prev.sha256,
      integrity: prev.integrity,
      rows: prev.rows,
      reused: true,
      reusedFrom: previous.name,
    };
    if (prev.compacted === undefined) delete adopted.compacted;
    else adopted.compacted = prev.compacted;
    manifest.sessions[i] = adopted;
  }
  return true;
}

/** The claim names root's record: integrity ok, the same source identities and the same hash and size. */
function holdsUp(claim: ManifestSession, prev: ManifestSession): boolean {
  if (prev.integrity !== 'ok' || !prev.source || !wellFormedSource(claim.source)) return false;
  return (
    sameIdentity(prev.source.db, claim.source.db) &&
    sameIdentity(prev.source.wal, claim.source.wal) &&
    claim.sha256 === prev.sha256 &&
    claim.bytes === prev.bytes
  );
}

/** A manifest from a full copy (no hints given): nothing in it is reused, whatever it says. */
export function nothingReused(manifest: Manifest): Manifest {
  for (const s of manifest.sessions) {
    s.reused = false;
    delete s.reusedFrom;
  }
  return manifest;
}
