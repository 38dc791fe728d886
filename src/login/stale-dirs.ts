/**
 * A login's private temp dir (agyctl-login-*, the capture shims; the
 * sign-in URL is inside) goes away on every exit path but SIGKILL. Each dir
 * records its owner (pid and process start time, so a reused pid is not
 * mistaken for the owner); the next login removes dirs that are ours (our
 * uid, our naming, a real directory) whose owner is gone.
 */
import fs from 'node:fs';
import path from 'node:path';

const LOGIN_DIR = /^agyctl-login-[A-Za-z0-9]{6}$/;
/** The name mkdtemp gives a login's private dir. */
export const isLoginDirName = (name: string): boolean => LOGIN_DIR.test(name);
export const OWNER_FILE = 'owner';
/** A dir from a version that did not record its owner: removed only once it is this old. */
const UNOWNED_MAX_AGE_MS = 24 * 3600_000;

/** The kernel's start time of a process (clock ticks since boot), or undefined when it is gone or unknown. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ownerAlive(pid: number, start: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = processStart(pid);
  return now === undefined || start === undefined || now === start;
}

export function recordOwner(dir: string): void {
  fs.writeFileSync(path.join(dir, OWNER_FILE), `${process.pid} ${processStart(process.pid) ?? '-'}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
}

/** Removes stale login dirs under root; returns their paths. Never throws: a sweep is housekeeping. */
export function sweepStaleLoginDirs(root: string, now = Date.now()): string[] {
  return sweepStaleDirs(root, LOGIN_DIR, now);
}

/** The same sweep for other private temp dirs of ours (`name` matches our naming; each records its owner with recordOwner). */
export function sweepStaleDirs(root: string, name: RegExp, now = Date.now()): string[] {
  const uid = process.getuid?.();
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const entry of names) {
    if (!name.test(entry)) continue;
    const dir = path.join(root, entry);
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      if (!isStale(dir, st, now)) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      /* gone meanwhile, or not ours to read: leave it */
    }
  }
  return removed;
}

function isStale(dir: string, st: fs.Stats, now: number): boolean {
  const file = path.join(dir, OWNER_FILE);
  let text: string;
  try {
    if (!fs.lstatSync(file).isFile()) return false;
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return now - st.mtimeMs > UNOWNED_MAX_AGE_MS;
  }
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  return !ownerAlive(pid, start === '-' ? undefined : start);
}
