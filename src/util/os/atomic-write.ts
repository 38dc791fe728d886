/**
 * Files that appear only whole. Every file agyctl writes for others to read
 * is written under a temporary name beside it (`tempBeside`: hidden, this
 * pid, random), fsynced, then published in one step, so a crash or a
 * concurrent reader sees either the old state or the new file, never a torn
 * or empty one:
 * - `writeFileAtomic` (and `writeStreamAtomic` for a stream) renames over
 *   the target: replace;
 * - `createWithContent` hard-links to the target: create, never replace (a
 *   lock or claim file that must not be read half-written).
 *
 * Never through a symlink: the temporary file is created with
 * O_EXCL|O_NOFOLLOW, its mode is set on the open descriptor, and the rename
 * replaces whatever name is at `file` (a link there is replaced, its target
 * is never touched). Callers that must refuse a link rather than replace it
 * check first (settings, see safe-fs.ts).
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { lstatOrNull, writeNewFile } from './safe-fs.js';

export interface AtomicWriteOptions {
  /** Mode for a new file. An existing regular file keeps its own mode unless `exactMode`. */
  mode?: number;
  /** Always use `mode`, also when replacing an existing file. */
  exactMode?: boolean;
}

/** `dir/.<name>.<pid>.<random>.tmp` for `dir/<name>`: in the same directory, so the rename or link stays on one file system. */
export function tempBeside(file: string): string {
  return path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`,
  );
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A new temporary file beside `file` holding `data`, `mode` whatever the umask, fsynced (writeNewFile: removed again when that fails). */
function writeTemp(file: string, data: string | Uint8Array, mode: number): string {
  const tmp = tempBeside(file);
  writeNewFile(tmp, typeof data === 'string' ? Buffer.from(data) : data, mode);
  return tmp;
}

/** Replace `file` with `data`: the old bytes or the new, never a mix. */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const dir = path.dirname(file);
  let mode = options.mode ?? 0o644;
  const st = lstatOrNull(file);
  if (st?.isFile() && !options.exactMode) mode = st.mode & 0o7777;
  const tmp = writeTemp(file, data, mode);
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fsyncDir(dir);
}

/** Replace `file` with what `write` streams into it (0600); a failed or aborted write leaves no file behind. */
export async function writeStreamAtomic<T>(file: string, write: (out: fs.WriteStream) => Promise<T>): Promise<T> {
  const tmp = tempBeside(file);
  const out = fs.createWriteStream(tmp, { flags: 'wx', mode: 0o600 });
  try {
    const result = await write(out);
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    fsyncFile(tmp);
    fs.renameSync(tmp, file);
    return result;
  } catch (err) {
    out.destroy();
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Create `file` holding `content` (0600), or return false when anything (a
 * link included, never followed) is already there. Hard-linked into place,
 * so `file` never exists empty or half-written: with a plain O_EXCL create,
 * a second `login` could read the claim between the create and the write,
 * take the empty pid for a dead one, remove the claim and start a second
 * login. `file`'s directory must be one only we can write.
 */
export function createWithContent(file: string, content: string): boolean {
  const tmp = writeTemp(file, content, 0o600);
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
