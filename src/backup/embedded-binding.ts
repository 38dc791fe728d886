/**
 * The SQLite addon the single executable carries. dlopen(3) loads only from a
 * file, so it is written out once per content (contentAddressedFile: atomic,
 * safe between processes and threads, never through a link) into the first
 * directory that takes it and can run code from it:
 *
 *   $AGYCTL_CACHE_DIR, $XDG_CACHE_HOME/agyctl, $HOME/.cache/agyctl,
 *   $RUNTIME_DIRECTORY/agyctl, $TMPDIR/agyctl-<uid>, /tmp/agyctl-<uid>, /var/tmp/agyctl-<uid>,
 *   and for root /var/cache/agyctl
 *
 * A read-only HOME (systemd's ProtectHome=read-only) falls through to the
 * unit's runtime directory or its private /tmp; a noexec mount to the next.
 *
 * A directory is used only when it and every directory and link on the way
 * to it belong to root or to this user and no one else can write them (a
 * sticky /tmp on the way is fine: util/os/roots-own.ts), so no other user can
 * swap the file between its hash and its load; as root, a HOME, XDG or
 * TMPDIR inside a user's directory is skipped that way. The directories on
 * the way are checked before anything is made or written there: a user who
 * could rename a directory root made would point root's write at another.
 * A user who makes /tmp/agyctl-0 and /var/tmp/agyctl-0 first (HOME unset)
 * leaves root /var/cache/agyctl, a directory only root can write. The addon is loaded
 * from the descriptor that was hashed (/proc/self/fd/N), not by its name.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LoadedBinding } from '../core/runtime.js';
import { contentAddressedFile } from '../util/content-file.js';
import { sha256 } from '../util/os/file-hash.js';
import { whyNotRootsOwn } from '../util/os/roots-own.js';
import { lstatOrNull } from '../util/os/safe-fs.js';
import { bindingError } from './sqlite.js';

/** Where the addon may be written, in order of preference. */
export function bindingDirs(env: NodeJS.ProcessEnv, uid = process.getuid?.() ?? 0): string[] {
  const abs = (p: string | undefined): p is string => p !== undefined && path.isAbsolute(p);
  const runtimeDir = env.RUNTIME_DIRECTORY?.split(':')[0];
  return [
    abs(env.AGYCTL_CACHE_DIR) ? env.AGYCTL_CACHE_DIR : undefined,
    abs(env.XDG_CACHE_HOME) ? path.join(env.XDG_CACHE_HOME, 'agyctl') : undefined,
    abs(env.HOME) ? path.join(env.HOME, '.cache', 'agyctl') : undefined,
    abs(runtimeDir) ? path.join(runtimeDir, 'agyctl') : undefined,
    abs(env.TMPDIR) ? path.join(env.TMPDIR, `agyctl-${uid}`) : undefined,
    `/tmp/agyctl-${uid}`,
    `/var/tmp/agyctl-${uid}`,
    uid === 0 ? '/var/cache/agyctl' : undefined,
  ].filter((d, i, all): d is string => d !== undefined && all.indexOf(d) === i);
}

/** Loads the addon from a file in the first of `dirs` that can hold it; one error naming the fix when none can. */
export function loadEmbeddedBinding(bytes: Uint8Array, dirs: string[]): LoadedBinding {
  const tried: string[] = [];
  let written: { file: string; err: unknown } | undefined;
  for (const dir of dirs) {
    const before = whyNotOursAbove(dir);
    if (before !== undefined) {
      tried.push(`${dir}: not used, ${before}`);
      continue;
    }
    let file: string;
    try {
      file = contentAddressedFile(dir, 'better_sqlite3', '.node', bytes);
    } catch (err) {
      tried.push(`${dir}: ${(err as NodeJS.ErrnoException).code ?? firstLine(err)}`);
      continue;
    }
    const notOurs = whyNotRootsOwn(dir);
    if (notOurs !== undefined) {
      tried.push(`${dir}: not used, ${notOurs}`);
      continue;
    }
    try {
      return { addon: dlopenHashed(file, bytes), path: file };
    } catch (err) {
      // A noexec mount refuses to map it; another directory may not.
      const why = firstLine(err);
      tried.push(why.startsWith(file) ? why : `${file}: ${why}`);
      written ??= { file, err };
    }
  }
  if (written && !tried.some((t) => /map segment|operation not permitted/i.test(t)))
    throw bindingError(
      written.file,
      written.err,
      'The executable is damaged or does not fit this system (Linux x86-64, glibc 2.28 or later): check it against SHA256SUMS and install it again (docs/install.md).',
    );
  throw bindingError(
    dirs.join(', '),
    new Error(`no directory could hold it (${tried.join('; ')})`),
    'Set AGYCTL_CACHE_DIR (or XDG_CACHE_HOME or TMPDIR) to a directory of this user (or root) that no one else can write and that is not mounted noexec (docs/install.md).',
  );
}

/**
 * dlopen(3) of the descriptor whose bytes were checked to be `bytes`: a file
 * swapped after the check is never loaded. The descriptor of a loaded addon
 * stays open: dlopen knows a library by its name, and /proc/self/fd/N must
 * never name another file while this one is loaded.
 */
function dlopenHashed(file: string, bytes: Uint8Array): object {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    if (sha256(fs.readFileSync(fd)) !== sha256(bytes)) throw new Error(`${file} changed after it was written`);
    const module = { exports: {} };
    process.dlopen(module, `/proc/self/fd/${fd}`);
    return module.exports;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * Why `dir`, or the nearest directory above it that exists (where
 * contentAddressedFile would start making directories), is not root's own or
 * this user's; undefined when it is, or when it cannot be looked at (then
 * contentAddressedFile fails with the reason).
 */
function whyNotOursAbove(dir: string): string | undefined {
  try {
    let at = path.resolve(dir);
    while (at !== '/' && !lstatOrNull(at)) at = path.dirname(at);
    return whyNotRootsOwn(at, { parent: at !== path.resolve(dir) });
  } catch {
    return undefined;
  }
}

/** dlopen's message spans lines; one line of it. */
const firstLine = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ');
