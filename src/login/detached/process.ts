/**
 * The processes a login record names (its supervisor, its server), told
 * apart from any other process before a signal goes to them. A record holds
 * a pid, the kernel's start time for it and a fingerprint of its command
 * line; a signal goes only to a process that matches all three and runs as
 * us, never to a pid of 1 or less (kill(-1) reaches every process).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { signalGroup } from '../../acp/children.js';

/** What a record says about one process it started. */
export interface RecordedProcess {
  pid: number;
  /** Field 22 of /proc/<pid>/stat when it started. */
  start: string | undefined;
  /** sha256 of its /proc/<pid>/cmdline when it started. */
  cmd?: string;
}

interface ProcStat {
  state: string;
  pgid: number;
  start: string;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', pgid: Number(fields[2]), start: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks), or undefined when the process is gone. */
export function procStart(pid: number): string | undefined {
  const st = procStat(pid);
  return st && st.state !== 'Z' ? st.start : undefined;
}

/** The same process is still running (not a recycled pid, not a zombie). */
export function sameProcessAlive(pid: number, start: string | undefined): boolean {
  const now = procStart(pid);
  return now !== undefined && (start === undefined || now === start);
}

function procUid(pid: number): number | undefined {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Uid:'));
    return line ? Number(line.split(/\s+/)[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function procArgv(pid: number): string[] | undefined {
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
export function recordProcess(pid: number): RecordedProcess {
  const argv = procArgv(pid);
  return { pid, start: procStart(pid), ...(argv ? { cmd: cmdFingerprint(argv) } : {}) };
}

/**
 * The process the record names, and nothing else: a pid above 1, running
 * as us, started when the record says, with the command line it recorded
 * (or, when none was recorded, one that `argvOk` accepts).
 */
export function isRecordedProcess(p: RecordedProcess, argvOk?: (argv: string[]) => boolean): boolean {
  if (!Number.isSafeInteger(p.pid) || p.pid <= 1 || typeof p.start !== 'string') return false;
  const st = procStat(p.pid);
  if (!st || st.state === 'Z' || st.start !== p.start) return false;
  const uid = process.getuid?.();
  if (uid !== undefined && procUid(p.pid) !== uid) return false;
  const argv = procArgv(p.pid);
  if (!argv) return false;
  if (p.cmd !== undefined) return cmdFingerprint(argv) === p.cmd;
  return argvOk ? argvOk(argv) : false;
}

/** SIGKILL a recorded process (its whole group when it leads one); nothing when it is not that process any more. */
export function killRecorded(p: RecordedProcess, argvOk?: (argv: string[]) => boolean): boolean {
  if (!isRecordedProcess(p, argvOk)) return false;
  if (procStat(p.pid)?.pgid === p.pid) return signalGroup(p.pid, 'SIGKILL');
  try {
    process.kill(p.pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
