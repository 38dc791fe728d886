/**
 * After a login: the token file must be a regular file, owned by the user,
 * mode 0600. Only metadata is read here; the content never is.
 */
import fs from 'node:fs';

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

export function checkAndFixTokenFile(file: string, uid = process.getuid?.()): TokenFileReport {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return { path: file, exists: false, regular: false, ownedByUser: false, mode: undefined, fixedFrom: undefined };
  }
  const report: TokenFileReport = { path: file, exists: true, regular: st.isFile(), ownedByUser: uid === undefined || st.uid === uid, mode: octal(st.mode), fixedFrom: undefined };
  if (report.regular && report.ownedByUser && (st.mode & 0o077) !== 0) {
    fs.chmodSync(file, 0o600);
    report.fixedFrom = report.mode;
    report.mode = '0600';
  }
  return report;
}
