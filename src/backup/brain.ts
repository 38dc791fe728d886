/**
 * A session's artifacts under `brain/<id>/` (the server writes its `/plan`
 * there and the agent edits it): part of the session, so snapshots,
 * archives, restore and verify carry them beside the database.
 *
 * The directory is untrusted (the server, or anyone who can write the state
 * dir, puts things there): only regular files are copied, read through a
 * descriptor opened without following links; links, FIFOs, sockets and
 * devices are never followed or opened and are reported as skipped, as are
 * names agyctl does not accept and directories nested too deep. Sizes are
 * bounded: a brain directory over the limits fails the session with a
 * message that names them, rather than filling the backup disk.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { childPath } from '../core/safe-path.js';
import { sha256File } from '../util/os/file-hash.js';
import { PinnedDir } from '../util/os/pinned-dir.js';
import {
  assertNotSymlink,
  copyFileNoFollow,
  createExclusive,
  fixDescriptor,
  lstatOrNull,
  makePrivateDir,
  mkdirPrivate,
  openNoFollow,
  rmPrivateDir,
} from '../util/os/safe-fs.js';
import { type FileIdentity, identityOf, sameIdentity } from './file-identity.js';
import { linkOrCopy, SNAPSHOT_FILE_MODE } from './snapshot-files.js';
import { ustarFits } from './tar.js';

export const BRAIN_LIMITS = {
  /** Directory levels below brain/<id>/. */
  depth: 8,
  files: 10_000,
  fileBytes: 256 * 1024 * 1024,
  totalBytes: 1024 * 1024 * 1024,
} as const;

/** A write in the same mtime tick as the last one could leave (size, mtime) unchanged: only files quiet this long are reused. */
const QUIET_MS = 2000;

export interface BrainFile {
  /** Relative to brain/<id>/, '/'-separated. */
  path: string;
  bytes: number;
  sha256: string;
  /** The source file as it was when the snapshot looked at it (what the next run compares for reuse). */
  source?: FileIdentity;
  reused?: boolean;
}

export interface BrainSkipped {
  path: string;
  reason: string;
}

/** What a snapshot holds of a session's brain directory (manifest schemaVersion 2). */
/** A session and its brain files, as its manifest entry records them (ManifestSession has both). */
export interface SessionBrain {
  id: string;
  brain?: ManifestBrain | null | undefined;
}

export interface ManifestBrain {
  files: BrainFile[];
  skipped: BrainSkipped[];
  checkedAt: string;
}

export class BrainLimitError extends Error {}

export function brainDir(stateDir: string, id: string): string {
  return childPath(path.join(stateDir, 'brain'), id);
}

/** A brain file's name inside a snapshot directory (and an archive): `brain/<id>/<path>`. */
export function brainEntryName(id: string, rel: string): string {
  return `brain/${id}/${rel}`;
}

/** Control characters (C0, DEL, C1) and separators: never in a name agyctl writes or prints. */
function badChar(c: string): boolean {
  const code = c.charCodeAt(0);
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || c === '/' || c === '\\';
}

function validSegment(name: string): boolean {
  return name.length > 0 && name !== '.' && name !== '..' && ![...name].some(badChar) && Buffer.byteLength(name) <= 255;
}

/** A relative path a manifest may name: plain segments, at most BRAIN_LIMITS.depth + 1 of them, that fit an archive header. */
export function validBrainPath(id: string, rel: unknown): rel is string {
  if (typeof rel !== 'string') return false;
  const parts = rel.split('/');
  return parts.length <= BRAIN_LIMITS.depth + 1 && parts.every(validSegment) && ustarFits(brainEntryName(id, rel));
}

interface Found {
  path: string;
  abs: string;
  identity: FileIdentity;
}

export interface BrainScan {
  found: Found[];
  skipped: BrainSkipped[];
  checkedAt: string;
}

/** What brain/<id>/ holds now (lstat only, nothing opened); null when the session has none. */
export function scanBrain(stateDir: string, id: string): BrainScan | null {
  const parent = path.join(stateDir, 'brain');
  const root = brainDir(stateDir, id);
  const checkedAt = new Date().toISOString();
  const top = lstatOrNull(parent);
  if (top === null) return null;
  if (!top.isDirectory()) return { found: [], skipped: [{ path: '.', reason: notFollowed(top, 'brain/') }], checkedAt };
  const st = lstatOrNull(root);
  if (st === null) return null;
  if (!st.isDirectory())
    return { found: [], skipped: [{ path: '.', reason: notFollowed(st, `brain/${id}`) }], checkedAt };
  const scan: BrainScan = { found: [], skipped: [], checkedAt };
  walk(root, '', scan, id);
  return scan;
}

function notFollowed(st: fs.Stats, what: string): string {
  return st.isSymbolicLink() ? `${what} is a symbolic link; not followed` : `${what} is not a directory; not copied`;
}

/** `rel`: `dir` under the brain directory ('' for the top), whose segments count its depth. */
function walk(dir: string, rel: string, scan: BrainScan, id: string): void {
  const depth = rel === '' ? 0 : rel.split('/').length;
  for (const name of fs.readdirSync(dir).sort()) {
    const relPath = rel === '' ? name : `${rel}/${name}`;
    if (!validSegment(name) || !ustarFits(brainEntryName(id, relPath))) {
      scan.skipped.push({ path: relPath, reason: 'a name agyctl does not accept (control characters, too long)' });
      continue;
    }
    const abs = path.join(dir, name);
    const st = lstatOrNull(abs);
    if (st === null) continue; // removed meanwhile
    if (st.isSymbolicLink()) scan.skipped.push({ path: relPath, reason: 'symbolic link; not followed' });
    else if (st.isDirectory()) {
      if (depth + 1 > BRAIN_LIMITS.depth)
        scan.skipped.push({ path: relPath, reason: `nested deeper than ${BRAIN_LIMITS.depth} levels; not copied` });
      else walk(abs, relPath, scan, id);
    } else if (st.isFile()) addFound(scan, id, relPath, abs);
    else scan.skipped.push({ path: relPath, reason: 'not a regular file (FIFO, socket or device); not opened' });
  }
}

function addFound(scan: BrainScan, id: string, relPath: string, abs: string): void {
  const identity = identityOf(abs);
  if (identity === null) return;
  scan.found.push({ path: relPath, abs, identity });
  const total = scan.found.reduce((n, f) => n + f.identity.size, 0);
  if (identity.size > BRAIN_LIMITS.fileBytes)
    throw limitError(id, `brain/${id}/${relPath} is ${identity.size} bytes`, `${BRAIN_LIMITS.fileBytes} bytes a file`);
  if (scan.found.length > BRAIN_LIMITS.files)
    throw limitError(id, `brain/${id}/ holds more than ${BRAIN_LIMITS.files} files`, `${BRAIN_LIMITS.files} files`);
  if (total > BRAIN_LIMITS.totalBytes)
    throw limitError(id, `brain/${id}/ holds more than ${total} bytes`, `${BRAIN_LIMITS.totalBytes} bytes in all`);
}

function limitError(id: string, what: string, limit: string): BrainLimitError {
  return new BrainLimitError(
    `${what}; agyctl backs up at most ${limit} of a session's brain directory (move what is not the session's out of brain/${id}/)`,
  );
}

/**
 * The scanned files into `workDir/brain/<id>/`: hard-linked from the previous
 * snapshot when unchanged and quiet (as databases are), else copied and
 * hashed in one pass; `sync` fsyncs them before the snapshot is complete.
 */
export function copyBrain(
  scan: BrainScan,
  {
    id,
    workDir,
    previous,
    sync,
  }: {
    id: string;
    workDir: string;
    previous: { dir: string; brain: ManifestBrain | undefined } | undefined;
    sync: { add(file: string): void };
  },
): ManifestBrain {
  const files: BrainFile[] = [];
  const skipped = [...scan.skipped];
  const root = path.join(workDir, 'brain', id);
  const old = new Map((previous?.brain?.files ?? []).map((f) => [f.path, f]));
  for (const f of scan.found) {
    const dest = path.join(root, ...f.path.split('/'));
    fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
    const prev = old.get(f.path);
    if (previous && prev && reusable(prev, f, scan.checkedAt, previous.brain!.checkedAt)) {
      linkOrCopy(path.join(previous.dir, ...brainEntryName(id, f.path).split('/')), dest);
      files.push({ path: f.path, bytes: prev.bytes, sha256: prev.sha256, source: f.identity, reused: true });
      continue;
    }
    const copied = copyHashing(f, dest);
    if (copied === null) skipped.push({ path: f.path, reason: 'replaced while it was copied (a link?); not copied' });
    else {
      files.push({ path: f.path, ...copied, source: f.identity });
      sync.add(dest);
    }
  }
  // Their entries too: the run fsyncs only its work directory itself.
  const dirs = new Set(scan.found.map((f) => path.dirname(path.join(root, ...f.path.split('/')))));
  for (const d of [...dirs].sort().reverse()) sync.add(d);
  if (dirs.size > 0) sync.add(path.dirname(root));
  return { files, skipped, checkedAt: scan.checkedAt };
}

function reusable(prev: BrainFile, now: Found, nowCheckedAt: string, prevCheckedAt: string): boolean {
  if (!prev.source || !sameIdentity(prev.source, now.identity)) return false;
  const mtime = Number(BigInt(now.identity.mtimeNs) / 1_000_000n);
  return Date.parse(nowCheckedAt) - mtime > QUIET_MS && Date.parse(prevCheckedAt) - mtime > QUIET_MS;
}

/** Copy through a descriptor opened O_NOFOLLOW, hashing what was copied; null when it is no longer the regular file scanned. */
function copyHashing(f: Found, dest: string): { bytes: number; sha256: string } | null {
  let src: number;
  try {
    src = openNoFollow(f.abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(src);
    if (!st.isFile() || String(st.ino) !== f.identity.inode) return null;
    const hash = crypto.createHash('sha256');
    const dst = createExclusive(dest, SNAPSHOT_FILE_MODE);
    let bytes = 0;
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let n = fs.readSync(src, buf, 0, buf.length, null); n > 0; n = fs.readSync(src, buf, 0, buf.length, null)) {
        bytes += n;
        if (bytes > BRAIN_LIMITS.fileBytes)
          throw new BrainLimitError(`${f.path} grew past ${BRAIN_LIMITS.fileBytes} bytes while it was copied`);
        hash.update(buf.subarray(0, n));
        for (let off = 0; off < n; ) off += fs.writeSync(dst, buf, off, n - off);
      }
      fixDescriptor(dst, SNAPSHOT_FILE_MODE);
    } finally {
      fs.closeSync(dst);
    }
    return { bytes, sha256: hash.digest('hex') };
  } finally {
    fs.closeSync(src);
  }
}

/**
 * Put a snapshot's brain files back as `stateDir/brain/<id>/`: built in a
 * private directory beside it, then renamed into place; a brain directory
 * that was there is kept beside it as `<id>.pre-restore-<stamp>` (returned).
 * A snapshot without brain files leaves the current directory alone, and so
 * does one whose files are all there already (`unchanged`).
 */
export function restoreBrain(
  snapshotDir: string,
  stateDir: string,
  { id, brain }: SessionBrain,
  stamp: string,
): { preRestore: string | null; unchanged: boolean } {
  if (!brain || brain.files.length === 0) return { preRestore: null, unchanged: false };
  // As for databases: a directory that holds the snapshot's files already is left as it is, with no copy of itself.
  if (brainHoldsSnapshot(stateDir, id, brain)) return { preRestore: null, unchanged: true };
  const parentPath = path.join(stateDir, 'brain');
  assertNotSymlink(parentPath, 'the brain directory');
  mkdirPrivate(parentPath);
  // Every step works through held descriptors: whoever else can write brain/ may rename it or
  // put a link in place of a name between two steps, and no step may follow that.
  const parent = PinnedDir.open(parentPath);
  try {
    assertNotSymlink(parent.at(id), "a session's brain directory");
    const priv = pinPrivateDir(parent);
    try {
      const fresh = priv.at(id);
      fs.mkdirSync(fresh, { mode: 0o700 });
      for (const f of brain.files) {
        const dest = path.join(fresh, ...f.path.split('/'));
        makeDirs(fresh, path.dirname(dest));
        copyFileNoFollow(path.join(snapshotDir, ...brainEntryName(id, f.path).split('/')), dest, 0o600);
      }
      let preRestore: string | null = null;
      if (lstatOrNull(parent.at(id)) !== null) {
        preRestore = `${brainDir(stateDir, id)}.pre-restore-${stamp}`;
        fs.renameSync(parent.at(id), parent.at(path.basename(preRestore)));
      }
      fs.renameSync(fresh, parent.at(id));
      parent.fsync();
      if (preRestore) pruneBrainPreRestore(parent, id);
      return { preRestore, unchanged: false };
    } finally {
      // Ours and 0700, so nobody else can change what is in it; a link put in its place is removed, not followed.
      priv.close();
      try {
        rmPrivateDir(parent.at(priv.shownName));
      } catch {
        // Tidying up only: a restore that is done stays done, and is reported so, when whoever else
        // writes brain/ keeps the dir from going (a later restore's sweep removes what is left).
      }
    }
  } finally {
    parent.close();
  }
}

/** Pre-restore copies of a brain directory kept per session, as for its database (PRE_RESTORE_KEEP in restore-one.ts). */
export const BRAIN_PRE_RESTORE_KEEP = 3;

const BRAIN_PRE_RESTORE = /^(.+)\.pre-restore-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z)$/;

/** Whether brain/<id>/ holds exactly the snapshot's files, byte for byte (nothing skipped, nothing more). */
export function brainHoldsSnapshot(stateDir: string, id: string, brain: ManifestBrain): boolean {
  let scan: BrainScan | null;
  try {
    scan = scanBrain(stateDir, id);
  } catch {
    return false; // over the limits: not the snapshot's
  }
  if (!scan || scan.skipped.length > 0 || scan.found.length !== brain.files.length) return false;
  const want = new Map(brain.files.map((f) => [f.path, f]));
  return scan.found.every((f) => {
    const w = want.get(f.path);
    if (!w || w.bytes !== f.identity.size) return false;
    try {
      return sha256File(f.abs) === w.sha256;
    } catch {
      return false;
    }
  });
}

/** Keep the newest BRAIN_PRE_RESTORE_KEEP `<id>.pre-restore-<stamp>` directories (names sort by their UTC stamp); best effort. */
function pruneBrainPreRestore(parent: PinnedDir, id: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(parent.path);
  } catch {
    return;
  }
  const copies = names.filter((n) => BRAIN_PRE_RESTORE.exec(n)?.[1] === id).sort();
  for (const name of copies.slice(0, -BRAIN_PRE_RESTORE_KEEP)) {
    try {
      // rm does not follow links: a link put in a copy's place goes, not what it points to.
      fs.rmSync(parent.at(name), { recursive: true, force: true });
    } catch {
      // Tidying up only: the restore is done; the next one tries again.
    }
  }
}

/** A fresh private dir in `parent`, held open, checked to be the one we made (ours, 0700). */
function pinPrivateDir(parent: PinnedDir): PinnedDir & { shownName: string } {
  const made = makePrivateDir(parent.path, 'restore');
  const name = path.basename(made);
  const held = PinnedDir.open(parent.at(name));
  const st = held.stat();
  if (st.uid !== process.getuid?.() || (st.mode & 0o777) !== 0o700) {
    held.close();
    throw Object.assign(new Error(`${parent.shown}/${name} was replaced while agyctl restored into it`), {
      code: 'EPERM',
    });
  }
  return Object.assign(held, { shownName: name });
}

function makeDirs(root: string, dir: string): void {
  let d = root;
  for (const part of path.relative(root, dir).split(path.sep).filter(Boolean)) {
    d = path.join(d, part);
    if (lstatOrNull(d) === null) fs.mkdirSync(d, { mode: 0o700 });
  }
}
