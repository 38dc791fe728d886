/**
 * A fresh copy checked and hashed on this thread: integrity_check and row
 * counts, sha256 (snapshotDb fsyncs it after setting its mode). A backup run always has its worker pool
 * (pooled-snapshot.ts); this is snapshotDb's path without one, which keeps
 * it usable in-process (the unit tests, where the pool's workers cannot
 * load from the TypeScript sources).
 */
import fs from 'node:fs';
import { sha256File } from './files.js';
import { checkFreshCopy } from './sqlite.js';

export interface CheckedFile {
  integrity: string;
  rows: Record<string, number>;
  sha256: string;
  bytes: number;
}

export function checkInLine(file: string): CheckedFile {
  const checked = checkFreshCopy(file);
  const sha256 = sha256File(file);
  return { ...checked, sha256, bytes: fs.statSync(file).size };
}
