/**
 * agyctl where another user can read it. As root on another user's state
 * dir, agyctl runs itself again as that user, and their servers (here the
 * simulator) start as them too: from a checkout in a directory they cannot
 * enter (root's /root, a `mktemp -d`), those would fail for a reason no
 * installed agyctl has. Such a checkout is copied once per build (bin/,
 * dist/, the simulator's launcher and the production dependencies) into a
 * 0755 directory under the system's temp dir, which the e2e teardown removes.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AGYCTL_ARGV, ROOT, RUNTIME, runAgyctlFrom } from './cli.js';
import { copyApp } from './release-artifacts.js';

/**
 * The names of this checkout's copies: other checkouts on the machine may run their e2e files at the
 * same time, and the teardown of one run removes only its own checkout's copies.
 */
export const READABLE_APP_PREFIX = `agyctl-readable-app-${createHash('sha256').update(ROOT).digest('hex').slice(0, 8)}-`;

/** Points the cli helpers at a copy other users can read, when the checkout is not one. */
export async function useReadableApp(): Promise<void> {
  if (othersCanEnter(ROOT)) return;
  const app = await readableCopy();
  const sim = path.join(app, 'scripts', 'agy-acp-sim');
  const argv = RUNTIME === 'executable' ? [readableExecutable(app)] : ['node', path.join(app, 'bin', 'agyctl.js')];
  runAgyctlFrom({ argv, sim });
}

/** The single executable beside the copy: it starts itself again as the user (the login supervisor). */
function readableExecutable(app: string): string {
  const exe = AGYCTL_ARGV[0]!;
  const st = fs.statSync(exe);
  const copy = path.join(app, `${path.basename(exe)}-${st.size}-${Math.trunc(st.mtimeMs)}`);
  if (fs.existsSync(copy)) return copy;
  const tmp = `${copy}.${process.pid}.tmp`;
  fs.copyFileSync(exe, tmp);
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, copy);
  return copy;
}

/** Whether every directory from / down to `dir` lets others through (o+x). */
export function othersCanEnter(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) return false;
    if (d === path.dirname(d)) return true;
  }
}

async function readableCopy(): Promise<string> {
  const dir = path.join(os.tmpdir(), `${READABLE_APP_PREFIX}${buildKey()}`);
  if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { mode: 0o755 });
  fs.chmodSync(tmp, 0o755);
  await copyApp(tmp);
  try {
    fs.renameSync(tmp, dir);
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true }); // another test file made it first
  }
  return dir;
}

/** The build the copy is of: every dist/ file's path and mtime, and the lock file. */
function buildKey(): string {
  const hash = createHash('sha256');
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else hash.update(`${p}\0${fs.statSync(p).mtimeMs}\0`);
    }
  };
  walk(path.join(ROOT, 'dist'));
  hash.update(fs.readFileSync(path.join(ROOT, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}
