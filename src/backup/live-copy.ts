/**
 * A consistent private copy of a conversation database's files, taken
 * without opening them with SQLite. Any SQLite connection to the live files
 * writes beside them: it creates `-wal` and `-shm` for a closed database,
 * rewrites the `-shm` (its read marks, or a fresh wal-index when no one else
 * has it open), and better-sqlite3 offers neither `immutable=1` nor
 * `readonly_shm` (no URI filenames). So the state dir is only read(2) from:
 * the db, then its WAL, are copied into a private directory (where the
 * snapshot will be), and SQLite opens that copy, rebuilding the wal-index
 * from the copied WAL.
 *
 * A copy taken while a server commits is whole when it is one state of the
 * database. Commits only append WAL frames (frame checksums chain, so a torn
 * tail is dropped by the replay), and a checkpoint only writes pages that
 * are still in the WAL; what breaks a copy is a WAL started over (a restart
 * or a truncate: its header's checkpoint sequence and salts change) while
 * the db is copied, or a write to the db file with no WAL to redo it. So a
 * copy counts when the WAL header stayed the same from before the db was
 * copied until after (or, without a WAL, the db's inode, size and mtime
 * did), no rollback journal was there, and no process held the database
 * exclusively (`locking_mode=EXCLUSIVE`, or a rollback-mode commit), seen in
 * /proc/locks. Otherwise the caller tries again. docs/backup.md says why
 * this and not a read-only open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openNoFollow } from '../util/os/safe-fs.js';
import { writeLocked } from '../util/procfs.js';
import { type FileIdentity, identityOf, sameIdentity } from './file-identity.js';

const { O_RDONLY, O_NONBLOCK, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;

/** The WAL header: magic, format, page size, checkpoint sequence, two salts, its checksum. */
export const WAL_HEADER_BYTES = 32;
/** SQLite's unix lock bytes: a write lock on its shared range is an EXCLUSIVE lock on the database. */
const SHARED_FIRST = 0x40000000 + 2;
const SHARED_LAST = SHARED_FIRST + 510 - 1;

/** What tells whether the files changed under a copy. */
export interface LiveLook {
  db: FileIdentity | null;
  /** The WAL's header; null when there is no WAL or it is shorter than a header (empty: nothing to replay). */
  walHeader: Buffer | null;
  /** A rollback journal beside the db, or an exclusive lock on it: a writer is mid-commit (or crashed in one). */
  writing: boolean;
}

export function lookAt(db: string): LiveLook {
  const id = identityOf(db);
  return {
    db: id,
    walHeader: readHeader(`${db}-wal`),
    writing: fs.existsSync(`${db}-journal`) || (id !== null && writeLocked(db, SHARED_FIRST, SHARED_LAST)),
  };
}

/**
 * Whether the db copied after `before` and the WAL copied (header
 * `copiedWal`) before `after` are one state of the database.
 */
export function isOneState(before: LiveLook, copiedWal: Buffer | null, after: LiveLook): boolean {
  if (before.writing || after.writing) return false;
  if (before.db === null || after.db === null || before.db.inode !== after.db.inode) return false;
  if (!sameHeader(copiedWal, after.walHeader)) return false;
  return before.walHeader !== null ? sameHeader(before.walHeader, copiedWal) : sameIdentity(before.db, after.db);
}

/**
 * Copies `source` (and its `-wal`) into `dir`, which the caller created
 * private and removes. Returns the copy's path, or null when the files
 * changed meanwhile (try again). Links are never followed (O_NOFOLLOW).
 */
export function copyLiveDatabase(source: string, dir: string): string | null {
  const copy = path.join(dir, 'copy.db');
  return copyLiveInto(source, copy) ? copy : null;
}

/**
 * Copies `source` to `copy` (and its `-wal` to `copy`-wal), new files the
 * caller names in a directory of its own: true when the copy is one state of
 * the database; false when the files changed meanwhile (the caller removes
 * what was copied and tries again).
 */
export function copyLiveInto(source: string, copy: string): boolean {
  const before = lookAt(source);
  if (before.writing) return false;
  copyFile(source, copy);
  const copiedWal = copyFile(`${source}-wal`, `${copy}-wal`, { optional: true });
  return isOneState(before, copiedWal, lookAt(source));
}

function sameHeader(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

function readHeader(file: string): Buffer | null {
  const fd = openOptional(file);
  if (fd === null) return null;
  try {
    const head = Buffer.alloc(WAL_HEADER_BYTES);
    return fs.readSync(fd, head, 0, WAL_HEADER_BYTES, 0) === WAL_HEADER_BYTES ? head : null;
  } finally {
    fs.closeSync(fd);
  }
}

function openOptional(file: string): number | null {
  try {
    return openNoFollow(file, O_RDONLY | O_NONBLOCK, 0, 'a conversation database file');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * The kernel copies (copy_file_range, by libuv's copyfile) from the
 * descriptor opened without following links: `/proc/self/fd/N` names that
 * very file, so a link swapped in after the open is not what is read. One
 * copy in the kernel instead of a read and a write through this process.
 */
const FD_PATHS = '/proc/self/fd';

/**
 * A plain copy to a new file (O_EXCL), not fsynced (the copy is scratch);
 * returns the copy's first WAL_HEADER_BYTES (null when shorter, or when an
 * optional source is missing).
 */
function copyFile(from: string, to: string, opts: { optional?: boolean } = {}): Buffer | null {
  const src = opts.optional ? openOptional(from) : openNoFollow(from, O_RDONLY | O_NONBLOCK, 0);
  if (src === null) return null;
  try {
    if (!fs.fstatSync(src).isFile())
      throw Object.assign(new Error(`${from} is not a regular file`), { code: 'EINVAL' });
    if (fs.existsSync(FD_PATHS)) {
      fs.copyFileSync(path.join(FD_PATHS, String(src)), to, fs.constants.COPYFILE_EXCL);
      fs.chmodSync(to, 0o600); // the copy took the source's mode; agyctl writes into it
    } else copyByReading(src, to);
  } finally {
    fs.closeSync(src);
  }
  return readHeader(to);
}

let buffer: Buffer | undefined;

/** Without /proc: read and written here. */
function copyByReading(src: number, to: string): void {
  const dst = fs.openSync(to, O_WRONLY | O_CREAT | O_EXCL, 0o600);
  try {
    buffer ??= Buffer.allocUnsafe(1 << 20);
    for (let pos = 0, n = fs.readSync(src, buffer, 0, buffer.length, 0); n > 0; ) {
      for (let off = 0; off < n; ) off += fs.writeSync(dst, buffer, off, n - off);
      pos += n;
      n = fs.readSync(src, buffer, 0, buffer.length, pos);
    }
  } finally {
    fs.closeSync(dst);
  }
}
