/**
 * A directory tree as "changes nothing" compares it: every entry under the
 * root, the root included, with its type, mode, owner, size, mtime (ns) and,
 * for a file, the sha256 of its bytes; a link's target, never followed.
 * `changes(before, after)` lists what differs, one line per entry, so a
 * failing test names the file and the field.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface ListedEntry {
  type: 'dir' | 'file' | 'link' | 'other';
  mode: string;
  uid: number;
  gid: number;
  size: number;
  mtimeNs: string;
  /** sha256 of a file's bytes, a link's target, else null. */
  content: string | null;
}

/** Relative path ('.' for the root) → entry, in walk order. */
export type Listing = Map<string, ListedEntry>;

/** Empty when `root` does not exist (a box before its first login). */
export function listTree(root: string): Listing {
  const out: Listing = new Map();
  if (!fs.existsSync(root)) return out;
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    const st = fs.lstatSync(abs, { bigint: true });
    const type = st.isDirectory() ? 'dir' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'link' : 'other';
    out.set(rel, {
      type,
      mode: (Number(st.mode) & 0o7777).toString(8).padStart(4, '0'),
      uid: Number(st.uid),
      gid: Number(st.gid),
      size: Number(st.size),
      mtimeNs: st.mtimeNs.toString(),
      content: type === 'file' ? sha256Of(abs) : type === 'link' ? fs.readlinkSync(abs) : null,
    });
    if (type === 'dir') for (const name of fs.readdirSync(abs).sort()) walk(path.join(rel, name));
  };
  walk('.');
  return out;
}

/** A file's sha256, opened without following a link and without blocking on a FIFO. */
function sha256Of(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const hash = crypto.createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 16);
    for (let n = fs.readSync(fd, buf); n > 0; n = fs.readSync(fd, buf)) hash.update(buf.subarray(0, n));
    return hash.digest('hex');
  } finally {
    fs.closeSync(fd);
  }
}

/** What differs between two listings: "+ name" (new), "- name" (gone), "~ name: field before → after". */
export function changes(before: Listing, after: Listing): string[] {
  const lines: string[] = [];
  for (const [name, was] of before) {
    const now = after.get(name);
    if (now === undefined) {
      lines.push(`- ${name}`);
      continue;
    }
    for (const key of Object.keys(was) as Array<keyof ListedEntry>) {
      if (was[key] !== now[key]) lines.push(`~ ${name}: ${key} ${String(was[key])} → ${String(now[key])}`);
    }
  }
  for (const name of after.keys()) if (!before.has(name)) lines.push(`+ ${name}`);
  return lines;
}
