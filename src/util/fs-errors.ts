/**
 * Ordinary file-system failures are not bugs: a Node system error (it has
 * an errno code and a path) becomes an AgyError naming the path, what went
 * wrong in plain words, and the fix. Bad paths and permissions are exit 2;
 * a full disk or quota is exit 6 (a backup that could not be written).
 * Applied where a use case meets the file system, and as a last resort in
 * main before anything would be called a bug.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT, type ExitCode } from '../core/errors.js';
import { firstClosedDir } from './os/tree-owner.js';

interface Meaning {
  exit: ExitCode;
  code: string;
  what: string;
  fix: (path: string) => string;
}

const FULL: Meaning = {
  exit: EXIT.findings,
  code: 'fs-full',
  what: 'no space left on the device',
  fix: () => 'free space on that file system (or raise its quota)',
};

const MEANINGS: Readonly<Record<string, Meaning>> = {
  EACCES: {
    exit: EXIT.usage,
    code: 'fs-permission-denied',
    what: 'permission denied',
    fix: (p) => `fix the owner or mode of ${p} (ls -ld it), or run as the user that owns it`,
  },
  EPERM: {
    exit: EXIT.usage,
    code: 'fs-permission-denied',
    what: 'operation not permitted',
    fix: (p) => `fix the owner, mode or attributes of ${p} (ls -ld, lsattr), or run as the user that owns it`,
  },
  EROFS: {
    exit: EXIT.usage,
    code: 'fs-read-only',
    what: 'the file system is read-only',
    fix: () => 'choose a location on a writable file system',
  },
  ENOTDIR: {
    exit: EXIT.usage,
    code: 'fs-not-a-directory',
    what: 'a part of this path is a file, not a directory',
    fix: () => 'give the path of a directory (or move the file aside)',
  },
  EEXIST: {
    exit: EXIT.usage,
    code: 'fs-not-a-directory',
    what: 'exists and is not a directory',
    fix: () => 'give the path of a directory (or move the file aside)',
  },
  EISDIR: {
    exit: EXIT.usage,
    code: 'fs-is-a-directory',
    what: 'is a directory where a file belongs',
    fix: (p) => `move ${p} aside (it should be a file)`,
  },
  ERR_FS_EISDIR: {
    exit: EXIT.usage,
    code: 'fs-is-a-directory',
    what: 'is a directory where a file belongs',
    fix: (p) => `move ${p} aside (it should be a file)`,
  },
  ENAMETOOLONG: {
    exit: EXIT.usage,
    code: 'fs-name-too-long',
    what: 'the path or one of its names is too long',
    fix: () => 'use a shorter path (names up to 255 bytes, paths up to 4095)',
  },
  ELOOP: {
    exit: EXIT.usage,
    code: 'fs-symlink-loop',
    what: 'too many levels of symbolic links',
    fix: () => 'fix the symbolic links along the path',
  },
  ENOENT: {
    exit: EXIT.usage,
    code: 'fs-not-found',
    what: 'does not exist',
    fix: () => 'check the path (a parent directory may be missing)',
  },
  ENOSPC: FULL,
  EDQUOT: { ...FULL, what: 'disk quota exceeded' },
  EFBIG: { ...FULL, what: 'file too large (file-size limit)' },
};

type SysError = NodeJS.ErrnoException & { info?: { path?: unknown } };

/** The path a system error was about: its own, or (writes through a descriptor carry none) the use case's default. */
function errPath(err: SysError, fallback: string | undefined): string | undefined {
  const own = err.path ?? err.info?.path;
  return typeof own === 'string' ? own : fallback;
}

/** A Node system error from the file system: an errno-style code we know, and a path it was about. */
export function isFsError(err: unknown, fallbackPath?: string): err is SysError & { code: string } {
  if (!(err instanceof Error)) return false;
  const e = err as SysError;
  return typeof e.code === 'string' && e.code in MEANINGS && errPath(e, fallbackPath) !== undefined;
}

/** A directory a use case works in, named for people: the path's role is the root that holds it. */
export interface FsRoot {
  dir: string;
  /** "the backup directory (--to)", "the state dir (--state-dir)". */
  role: string;
  /** Added to the fix: where to change it. */
  also?: string;
}

export interface FsErrorContext {
  roots?: FsRoot[];
  /** The code for a full destination in this use case (backup: `backup-write-failed`). */
  fullCode?: string;
  /** The path to name when the error has none (a write through a file descriptor). */
  defaultPath?: string;
}

/**
 * What a permission fix must name: the first directory on the way to `p`
 * this process cannot enter (a user's path under a 0700 /root), else, for a
 * path not there yet, the directory it was to be made in, else `p`.
 */
function blockingPath(p: string): string {
  const abs = path.resolve(p);
  return firstClosedDir(path.dirname(abs)) ?? (fs.existsSync(abs) ? abs : path.dirname(abs));
}

function rootOf(p: string, roots: FsRoot[]): FsRoot | undefined {
  const inside = (dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
  return roots.filter((r) => inside(r.dir)).sort((a, b) => b.dir.length - a.dir.length)[0];
}

/** The AgyError for a file-system error, or undefined when it is not one (a bug stays a bug). */
export function fsAgyError(err: unknown, context: FsErrorContext = {}): AgyError | undefined {
  if (!isFsError(err, context.defaultPath)) return undefined;
  const meaning = MEANINGS[err.code]!;
  const p = errPath(err, context.defaultPath)!;
  const code = meaning.exit === EXIT.findings && context.fullCode ? context.fullCode : meaning.code;
  const errno = err.code.replace(/^ERR_FS_/, ''); // Node's own ERR_FS_EISDIR is plain EISDIR to people
  const root = rootOf(p, context.roots ?? []);
  const where = root ? `${root.role}: ${p}` : p;
  const fix = meaning.fix(err.code === 'EACCES' ? blockingPath(p) : p);
  const hint = root?.also ? `${fix}; ${root.also}` : fix;
  return new AgyError(meaning.exit, code, `${where}: ${meaning.what} (${errno}).`, {
    hint,
    cause: err,
    details: { path: p, errno },
  });
}

/** Run `work`; a file-system error becomes an AgyError with the given context, anything else passes through. */
export async function withFsErrors<T>(context: FsErrorContext, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw fsAgyError(err, context) ?? err;
  }
}
