/**
 * What a state dir looks like without reading any file: every entry's
 * relative path with its type, size, mtime and inode (lstat, links not
 * followed), bounded. Two equal fingerprints mean nothing was written,
 * created, replaced or removed in between; the token file is never read.
 */
import fs from 'node:fs';
import path from 'node:path';

const MAX_ENTRIES = 20_000;

export type StateFingerprint = Map<string, string>;

export function fingerprintState(dir: string): StateFingerprint {
  const out: StateFingerprint = new Map();
  const walk = (rel: string): void => {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(dir, rel));
    } catch {
      return;
    }
    for (const name of names) {
      if (out.size >= MAX_ENTRIES) return;
      const child = path.join(rel, name);
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(path.join(dir, child), { bigint: true });
      } catch {
        continue;
      }
      out.set(child, `${st.mode}:${st.size}:${st.mtimeNs}:${st.ino}`);
      if (st.isDirectory()) walk(child);
    }
  };
  walk('');
  return out;
}

export function sameState(a: StateFingerprint, b: StateFingerprint): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}
