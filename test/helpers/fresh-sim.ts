/**
 * The `sim` project's global setup: dist/sim is built with the project's tsc
 * when it is missing or older than src/sim, once, before any file runs (the
 * files run at the same time: a build of each file's own would rewrite
 * dist/ under the simulators the others start). Other modules' type errors
 * do not block emitting ours, so only the freshness of dist/sim/main.js is
 * checked afterwards (each file checks it again: simBuildIsFresh).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.js';

const MAIN_JS = path.join(ROOT, 'dist', 'sim', 'main.js');

function newestMtime(dir: string): number {
  return Math.max(...fs.readdirSync(dir).map((f) => fs.statSync(path.join(dir, f)).mtimeMs));
}

export function simBuildIsFresh(): boolean {
  return fs.existsSync(MAIN_JS) && fs.statSync(MAIN_JS).mtimeMs >= newestMtime(path.join(ROOT, 'src', 'sim'));
}

export default function setup(): void {
  if (simBuildIsFresh()) return;
  spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
