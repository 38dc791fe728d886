/**
 * What root reads on another user's behalf (a snapshot directory or an
 * archive it streams into that user's restore) must be root's own: owned
 * by root (or the uid agyctl runs as), reached through directories and
 * links only root owns, none of them writable by others (a sticky ancestor
 * such as /tmp is fine: others cannot rename what root owns in it). Then no
 * one else can swap a link or a file under root between its checks and its
 * reads, and a user cannot point root at a root-only file through a link.
 * Files themselves are still opened with O_NOFOLLOW|O_NONBLOCK and fstat'ed.
 */
import fs from 'node:fs';
import path from 'node:path';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const STICKY = 0o1000;

const ours = (uid: number): boolean => uid === 0 || uid === process.geteuid?.();

/** Why `st` at `p` is not root's own, or undefined. `sticky`: an ancestor directory, where the sticky bit protects root's entries. */
function notOurs(p: string, st: fs.Stats, sticky: boolean): string | undefined {
  if (!ours(st.uid)) return `${p} belongs to uid ${st.uid}`;
  if ((st.mode & 0o022) !== 0 && !(sticky && st.isDirectory() && (st.mode & STICKY) !== 0))
    return `${p} can be written by users other than root`;
  return undefined;
}

/**
 * Undefined when `target` and every directory and link on the way to it are
 * root's own (see above); otherwise why not, naming the first component
 * that is not. A missing component is reported as such. `parent`: `target`
 * is a directory root is about to make its own entries in, so a sticky one
 * is fine there too.
 */
export function whyNotRootsOwn(target: string, opts: { parent?: boolean } = {}): string | undefined {
  let parts = path.resolve(target).split(path.sep).filter(Boolean);
  let at = '/';
  let why = notOurs('/', fs.lstatSync('/'), true);
  for (let hops = 0; parts.length > 0 && why === undefined; ) {
    const next = path.join(at, parts.shift()!);
    const st = fs.lstatSync(next, { throwIfNoEntry: false });
    if (!st) return `${next} does not exist`;
    if (st.isSymbolicLink()) {
      if (!ours(st.uid)) return `${next} is a symbolic link that belongs to uid ${st.uid}`;
      if (++hops > 40) return `too many symbolic links on the way to ${target}`;
      const link = fs.readlinkSync(next);
      parts = [...link.split(path.sep).filter(Boolean), ...parts];
      if (path.isAbsolute(link)) at = '/';
      continue;
    }
    why = notOurs(next, st, parts.length > 0 || opts.parent === true);
    at = next;
  }
  return why;
}

/**
 * Opens `file` inside `dir` (a '/'-separated relative name whose directories
 * are plain segments) for reading, only if every directory on the way and the
 * file itself are root's own and none is a link, and it is a regular file
 * (O_NONBLOCK: a FIFO cannot hang root). `dir` itself was checked with
 * whyNotRootsOwn. Throws an Error naming the refused component.
 */
export async function openRootsOwn(dir: string, name: string): Promise<fs.promises.FileHandle> {
  const segments = name.split('/');
  let at = dir;
  for (const seg of segments.slice(0, -1)) {
    at = path.join(at, seg);
    const st = fs.lstatSync(at);
    if (!st.isDirectory()) throw new Error(`${at} is not a directory (a link or a file where the snapshot has one)`);
    const why = notOurs(at, st, false);
    if (why) throw new Error(why);
  }
  const file = path.join(at, segments.at(-1)!);
  const handle = await fs.promises
    .open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    .catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ELOOP' ? new Error(`${file} is a symbolic link`) : err;
    });
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    const why = notOurs(file, st, false);
    if (why) throw new Error(why);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
