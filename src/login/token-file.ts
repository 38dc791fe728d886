/**
 * After a login: the token file must be a regular file, owned by the user
 * (as root: by the state dir's owner), mode 0600. Only metadata is read
 * here; the content never is.
 */
import fs from 'node:fs';
import type { Owner } from '../util/safe-fs.js';

export interface TokenFileReport {
  path: string;
  exists: boolean;
  regular: boolean;
  ownedByUser: boolean;
  /** Octal string as users write it, e.g. "0600". */
  mode: string | undefined;
  /** The mode before agyctl narrowed it, when it was wider than 0600. */
  fixedFrom: string | undefined;
}

const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * `owner`: as root on a user's state dir, the token belongs to the state
 * dir's owner (the server ran as root and wrote it root-owned). Mode and
 * owner are changed on a descriptor opened with O_NOFOLLOW, never by path:
 * a link swapped in after the lstat is not followed.
 */
export function checkAndFixTokenFile(file: string, uid = process.getuid?.(), owner?: Owner): TokenFileReport {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return { path: file, exists: false, regular: false, ownedByUser: false, mode: undefined, fixedFrom: undefined };
  }
  const owned = (u: number): boolean => uid === undefined || u === uid || u === owner?.uid;
  const report: TokenFileReport = {
    path: file,
    exists: true,
    regular: st.isFile(),
    ownedByUser: owned(st.uid),
    mode: octal(st.mode),
    fixedFrom: undefined,
  };
  if (!report.regular || !report.ownedByUser) return report;
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return { ...report, regular: false }; // replaced by a link (ELOOP) or gone since the lstat
  }
  try {
    const now = fs.fstatSync(fd);
    if (!now.isFile() || now.ino !== st.ino || !owned(now.uid))
      return { ...report, regular: now.isFile() && now.ino === st.ino, ownedByUser: owned(now.uid) };
    if ((now.mode & 0o077) !== 0) {
      fs.fchmodSync(fd, 0o600);
      report.fixedFrom = report.mode;
      report.mode = '0600';
    }
    if (owner && (now.uid !== owner.uid || now.gid !== owner.gid)) fs.fchownSync(fd, owner.uid, owner.gid);
  } finally {
    fs.closeSync(fd);
  }
  return report;
}
