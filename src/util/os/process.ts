/**
 * Whether a process agyctl recorded is still the one it recorded: a pid
 * alone can be reused, so lock files and private dirs record the pid and the
 * kernel's start time of the process (field 22 of /proc/<pid>/stat).
 */
import fs from 'node:fs';

/** The kernel's start time of a process (clock ticks since boot), or undefined when it is gone or unknown. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** A process with this pid exists (one of another user's counts: EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `pid` runs and, where both start times are known, is the process recorded with `start` (not a reused pid). */
export function recordedProcessAlive(pid: number, start: string | null | undefined): boolean {
  if (!pidAlive(pid)) return false;
  const now = processStart(pid);
  return now === undefined || start === undefined || start === null || now === start;
}
