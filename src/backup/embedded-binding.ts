/**
 * The SQLite addon the single executable carries. dlopen(3) loads only from a
 * file, so it is written out once per content (contentAddressedFile: atomic,
 * safe between processes and threads, never through a link) into the first
 * directory that takes it and can run code from it:
 *
 *   $AGYCTL_CACHE_DIR, $XDG_CACHE_HOME/agyctl, $HOME/.cache/agyctl,
 *   $RUNTIME_DIRECTORY/agyctl, $TMPDIR/agyctl-<uid>, /tmp/agyctl-<uid>, /var/tmp/agyctl-<uid>
 *
 * A read-only HOME (systemd's ProtectHome=read-only) falls through to the
 * unit's runtime directory or its private /tmp; a noexec mount to the next.
 */
import path from 'node:path';
import type { LoadedBinding } from '../core/runtime.js';
import { contentAddressedFile } from '../util/content-file.js';
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
  ].filter((d, i, all): d is string => d !== undefined && all.indexOf(d) === i);
}

/** Loads the addon from a file in the first of `dirs` that can hold it; one error naming the fix when none can. */
export function loadEmbeddedBinding(bytes: Uint8Array, dirs: string[]): LoadedBinding {
  const tried: string[] = [];
  let written: { file: string; err: unknown } | undefined;
  for (const dir of dirs) {
    let file: string;
    try {
      file = contentAddressedFile(dir, 'better_sqlite3', '.node', bytes);
    } catch (err) {
      tried.push(`${dir}: ${(err as NodeJS.ErrnoException).code ?? firstLine(err)}`);
      continue;
    }
    try {
      return { addon: dlopen(file), path: file };
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
    'Set AGYCTL_CACHE_DIR (or XDG_CACHE_HOME or TMPDIR) to a directory this user can write that is not mounted noexec (docs/install.md).',
  );
}

function dlopen(file: string): object {
  const module = { exports: {} };
  process.dlopen(module, file);
  return module.exports;
}

/** dlopen's message spans lines; one line of it. */
const firstLine = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ');
