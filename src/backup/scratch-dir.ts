/**
 * Private temporary directories (mode 0700) that never outlive the run: removed
 * in `finally`, and by a process 'exit' hook as well, which also runs when a
 * second Ctrl-C ends the process at once. Only SIGKILL or power loss can
 * leave one, and a proof's holds a copy of the token (prove-scratch.ts): each
 * records its owner (pid and start time, as login's temp dirs do), and every
 * new one first sweeps those of ours whose owner is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { recordOwner, sweepStaleDirs } from '../login/shims.js';

/** The scratch dirs agyctl makes under $TMPDIR: `backup verify --prove`, `restore --archive`, `sessions export`, root's restores into a user's state dir. */
export type ScratchPrefix =
  | 'agyctl-prove-'
  | 'agyctl-archive-'
  | 'agyctl-export-'
  | 'agyctl-restore-'
  | 'agyctl-assumptions-'
  | 'agyctl-snapshot-';
const SCRATCH_DIR = /^agyctl-(prove|archive|export|restore|assumptions|snapshot)-[A-Za-z0-9]{6}$/;

/** Removes scratch dirs of ours under `root` whose owner is gone; returns their paths. Never throws. */
export function sweepScratchDirs(root: string): string[] {
  return sweepStaleDirs(root, SCRATCH_DIR);
}

/** A fresh 0700 scratch dir under `root` that records its owner (after sweeping stale ones); the caller removes it. */
export function makeScratchDir(root: string, prefix: ScratchPrefix): string {
  sweepScratchDirs(root);
  const dir = fs.mkdtempSync(path.join(root, prefix));
  try {
    fs.chmodSync(dir, 0o700);
    recordOwner(dir);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

export async function withScratchDir<T>(
  root: string,
  prefix: ScratchPrefix,
  fn: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = makeScratchDir(root, prefix);
  const remove = (): void => fs.rmSync(dir, { recursive: true, force: true });
  process.on('exit', remove);
  try {
    return await fn(dir);
  } finally {
    process.off('exit', remove);
    remove();
  }
}
