/** Checked before any check runs, so a bad --prometheus path costs nothing and changes nothing (exit 2). */
import fs from 'node:fs';
import path from 'node:path';
import { usageError } from '../core/errors.js';

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
  if (fs.existsSync(file) && fs.statSync(file).isDirectory())
    throw usageError(`--prometheus ${file} is a directory.`, 'name a file, e.g. agyctl.prom');
}
