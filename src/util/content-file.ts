/**
 * A file written out once per content, for code that must be loaded from a
 * file (a native addon the executable carries): its name carries the bytes'
 * SHA-256, it is written atomically (writeFileAtomic: a temporary name made
 * O_EXCL|O_NOFOLLOW, fsynced, renamed into place), so any number of
 * processes and threads may race to write it and every reader sees no file
 * or the whole one. An existing file is used only if it is a regular file of
 * ours, reached without a link, holding exactly those bytes; anything else at
 * that name is replaced by the rename, never followed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './os/atomic-write.js';
import { sha256, sha256File } from './os/file-hash.js';
import { assertPrivateDir, lstatOrNull } from './os/safe-fs.js';

/** `dir/<stem>-<hash><ext>` holding `bytes`; `dir` is created 0700 and must be ours and private. */
export function contentAddressedFile(dir: string, stem: string, ext: string, bytes: Uint8Array): string {
  makeDirs(dir);
  assertPrivateDir(dir);
  const hash = sha256(bytes);
  const file = path.join(dir, `${stem}-${hash.slice(0, 32)}${ext}`);
  if (holds(file, hash)) return file;
  writeFileAtomic(file, bytes, { mode: 0o500, exactMode: true });
  return file;
}

/** mkdir -p, 0700, one level at a time: a read-only parent fails as EROFS (a recursive mkdir says ENOENT). */
function makeDirs(dir: string): void {
  if (lstatOrNull(dir)) return;
  makeDirs(path.dirname(dir));
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** Whether `file` is a regular file (not a link) of ours with exactly the bytes hashed to `hash`. */
function holds(file: string, hash: string): boolean {
  const st = lstatOrNull(file);
  if (!st?.isFile() || st.uid !== process.getuid?.()) return false;
  try {
    return sha256File(file) === hash;
  } catch {
    return false;
  }
}
