/**
 * Telling a process agyctl recorded apart from any other: a pid alone can be
 * reused, so what agyctl records about a process (lock files, private dirs,
 * the login record) is its pid plus the kernel's start time (field 22 of
 * /proc/<pid>/stat), and for a process it may signal, a fingerprint of its
 * command line too. Two strengths of "still alive":
 * - `recordedProcessAlive`, for lock files: when in doubt (another user's
 *   process, a start time unknown on either side) the holder lives, so a
 *   lock is never taken from a run that may still hold it;
 * - `sameProcessAlive` and `isRecordedProcess`, before a signal or a
 *   takeover: only a running process (not a zombie) with the recorded start
 *   time, and for `isRecordedProcess` our uid and the recorded command line.
 * Linux /proc; where it is missing every process reads as gone or unknown.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';

/** What agyctl records about a process it started or runs as. */
export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/<pid>/stat when it started. */
  start: string | undefined;
  /** sha256 of its /proc/<pid>/cmdline when it started. */
  cmd?: string;
}

interface ProcStat {
  /** The state letter: R, S, D, Z (zombie), ... */
  state: string;
  ppid: number;
  pgid: number;
  start: string;
}

/** /proc/<pid>/stat, split after the command name (which may hold spaces and parentheses). */
export function procStat(pid: number): ProcStat | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', ppid: Number(fields[1]), pgid: Number(fields[2]), start: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

/** The processes below `pid` now (its children, theirs, ...), from /proc's parent links. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  let names: string[] = [];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st) children.set(st.ppid, [...(children.get(st.ppid) ?? []), Number(name)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const below = children.get(queue.shift()!) ?? [];
    found.push(...below);
    queue.push(...below);
  }
  return found;
}

/** The kernel's start time of a process (clock ticks since boot), a zombie's too; undefined when it is gone or unknown. */
export function processStart(pid: number): string | undefined {
  return procStat(pid)?.start;
}

/** The same for a process still running: undefined for a zombie too. */
export function liveProcessStart(pid: number): string | undefined {
  const st = procStat(pid);
  return st && st.state !== 'Z' ? st.start : undefined;
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

/** Lock files: `pid` exists and, where both start times are known, is the process recorded with `start` (not a reused pid). */
export function recordedProcessAlive(pid: number, start: string | null | undefined): boolean {
  if (!pidAlive(pid)) return false;
  const now = processStart(pid);
  return now === undefined || start === undefined || start === null || now === start;
}

/** The same process is still running: not gone, not a zombie, and started at `start` when that was recorded. */
export function sameProcessAlive(pid: number, start: string | undefined): boolean {
  const now = liveProcessStart(pid);
  return now !== undefined && (start === undefined || now === start);
}

/** The real uid a process runs as, from /proc/<pid>/status. */
export function processUid(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = status.match(/^Uid:\s+(\d+)/m);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Its command line; undefined when it is gone or has none (a kernel thread, a zombie). */
export function processArgv(pid: number): string[] | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.length > 0 ? raw.replace(/\0$/, '').split('\0') : undefined;
  } catch {
    return undefined;
  }
}

export function cmdFingerprint(argv: string[]): string {
  return crypto.createHash('sha256').update(argv.join('\0')).digest('hex').slice(0, 32);
}

/** This process's record of itself, or of a child it just started. */
export function recordProcess(pid: number): ProcessIdentity {
  const argv = processArgv(pid);
  return { pid, start: liveProcessStart(pid), ...(argv ? { cmd: cmdFingerprint(argv) } : {}) };
}

/**
 * The process the record names, and nothing else: a pid above 1 (kill(-1)
 * reaches every process), running as us, started when the record says, with
 * the command line it recorded (or, when none was recorded, one that
 * `argvOk` accepts).
 */
export function isRecordedProcess(p: ProcessIdentity, argvOk?: (argv: string[]) => boolean): boolean {
  if (!Number.isSafeInteger(p.pid) || p.pid <= 1 || typeof p.start !== 'string') return false;
  const st = procStat(p.pid);
  if (!st || st.state === 'Z' || st.start !== p.start) return false;
  const uid = process.getuid?.();
  if (uid !== undefined && processUid(p.pid) !== uid) return false;
  const argv = processArgv(p.pid);
  if (!argv) return false;
  if (p.cmd !== undefined) return cmdFingerprint(argv) === p.cmd;
  return argvOk ? argvOk(argv) : false;
}
