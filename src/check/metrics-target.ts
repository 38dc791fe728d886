/**
 * The --prometheus file: checked before any check runs, so a bad path costs
 * nothing and changes nothing (exit 2), and written by the caller only when
 * nothing is there yet or the file is the caller's own, never through a link
 * (as the --trace file: util/os/safe-fs.ts, assertCallersFile). As root, a
 * textfile dir another user can write would otherwise let that user decide
 * the mode root's file gets, or which file root reads the last success from.
 */
import fs from 'node:fs';
import path from 'node:path';
import { usageError } from '../core/errors.js';
import { resolveUserPath } from '../core/paths.js';
import { fsAgyError } from '../util/fs-errors.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { assertCallersFile } from '../util/os/safe-fs.js';
import { METRICS_FD_VAR, relayFd } from '../util/os/tree-owner.js';

/**
 * The --prometheus FILE as the caller named it, absolute, and checked by the
 * process that will write it: not the state dir owner's child of a root run,
 * which sends root its text through a pipe (root's side checked the file).
 */
export function callersMetricsFile(flag: string | undefined, cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  if (flag === undefined) return undefined;
  const file = resolveUserPath(cwd, flag, env);
  if (relayFd(env, METRICS_FD_VAR) === undefined) assertMetricsTarget(file);
  return file;
}

/** Refuse a --prometheus path that cannot work. */
export function assertMetricsTarget(file: string): void {
  const dir = path.dirname(file);
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(dir);
  } catch {
    /* reported below */
  }
  if (!st?.isDirectory())
    throw usageError(
      `--prometheus ${file}: directory ${dir} does not exist.`,
      `create it, or point --prometheus at node_exporter's textfile directory`,
    );
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    throw usageError(
      `--prometheus ${file}: directory ${dir} is not writable by you.`,
      'choose a directory you can write, or fix its permissions',
    );
  }
  if (fs.lstatSync(file, { throwIfNoEntry: false })?.isDirectory())
    throw usageError(`--prometheus ${file} is a directory.`, 'name a file, e.g. agyctl.prom');
  assertCallersFile(file, '--prometheus');
}

/**
 * Replace the --prometheus file with `text`, atomically (the collector never
 * reads half a file); a new file is world-readable like other .prom files.
 * Checked again here: the run may have taken minutes since assertMetricsTarget.
 */
export function writeMetricsText(file: string, text: string | Uint8Array): void {
  assertCallersFile(file, '--prometheus');
  try {
    writeFileAtomic(file, text, { mode: 0o644 });
  } catch (err) {
    // A full disk fails a write through a descriptor, which names no path: it is this file's.
    throw fsAgyError(err, { defaultPath: file }) ?? err;
  }
}
