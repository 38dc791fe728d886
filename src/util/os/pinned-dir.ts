/**
 * A directory held open, and worked in through its descriptor: root acting
 * in a user's state dir must not follow a path the user can change between
 * two steps (rename a directory away, put a link in its place). O_NOFOLLOW
 * guards only the last component of a path; a descriptor guards them all.
 *
 * `PinnedDir.open` opens every component with O_DIRECTORY|O_NOFOLLOW
 * relative to the previous one (links only root or we own are followed):
 * a link swapped in is refused, not followed.
 * `at(name)` is `/proc/self/fd/<fd>/<name>`: the kernel resolves it to the
 * held directory, wherever it has been moved, so opens, creates and renames
 * by that path happen in it. (SQLite resolves such a path to its textual
 * target again, so SQLite itself is never pointed at one: see restore-one.ts.)
 * Linux only, as agyctl.
 */
import fs from 'node:fs';
import path from 'node:path';
import { unsafeSymlinkError } from './safe-fs.js';
import { linkTargetNow } from './tree-owner.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;

/** Opens `next` as a directory, then closes `fd` (on failure `fd` stays open for the caller to close). */
function reopen(fd: number, next: string, flags = 0): number {
  const opened = fs.openSync(next, O_RDONLY | O_DIRECTORY | flags);
  fs.closeSync(fd);
  return opened;
}

export class PinnedDir {
  private constructor(
    private fd: number | undefined,
    /** The path it was opened as (for messages and reports only). */
    readonly shown: string,
  ) {}

  /**
   * Opens `dir` component by component. A symbolic link on the way is
   * followed only when root (or this user) owns it: an administrator's
   * /home -> /data/home, never a link another user planted (that is
   * `unsafe-symlink`, exit 2). A component swapped for a link meanwhile
   * is refused, never followed.
   */
  static open(dir: string): PinnedDir {
    const me = process.getuid?.();
    let parts = path.resolve(dir).split(path.sep).filter(Boolean);
    let fd = fs.openSync('/', O_RDONLY | O_DIRECTORY);
    try {
      for (let hops = 0; parts.length > 0; ) {
        const part = parts.shift()!;
        const here = `/proc/self/fd/${fd}/${part}`;
        const st = fs.lstatSync(here);
        if (st.isSymbolicLink()) {
          if ((st.uid !== 0 && st.uid !== me) || ++hops > 40)
            throw unsafeSymlinkError(path.resolve(dir), 'a directory on the way to it');
          const target = linkTargetNow(here);
          if (target === null) {
            parts.unshift(part); // no longer a link (swapped back meanwhile): looked at again, as one more hop
            continue;
          }
          parts = [...target.split(path.sep).filter(Boolean), ...parts];
          if (path.isAbsolute(target)) fd = reopen(fd, '/');
          continue;
        }
        fd = reopen(fd, here, O_NOFOLLOW);
      }
    } catch (err) {
      fs.closeSync(fd);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENOTDIR')
        throw Object.assign(
          new Error(`${dir} changed while agyctl opened it (a link swapped in?); nothing was done there`),
          { code: 'EPERM' },
        );
      throw err;
    }
    return new PinnedDir(fd, dir);
  }

  /** The path of `name` inside the held directory (a plain name: no separators). */
  at(name: string): string {
    if (name.length === 0 || name.includes('/') || name === '.' || name === '..')
      throw new Error(`not a plain file name: ${JSON.stringify(name)}`);
    return `${this.path}/${name}`;
  }

  /** The held directory itself (`/proc/self/fd/<fd>`). */
  get path(): string {
    if (this.fd === undefined) throw new Error(`${this.shown} is no longer held open`);
    return `/proc/self/fd/${this.fd}`;
  }

  stat(): fs.Stats {
    return fs.fstatSync(this.descriptor());
  }

  fsync(): void {
    try {
      fs.fsyncSync(this.descriptor());
    } catch {
      // some filesystems refuse fsync on directories; renames are still atomic
    }
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private descriptor(): number {
    if (this.fd === undefined) throw new Error(`${this.shown} is no longer held open`);
    return this.fd;
  }
}
