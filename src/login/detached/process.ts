/**
 * A login's processes: starting its supervisor, and telling the processes
 * a login record names (its supervisor, its server) apart from any other
 * process before a signal goes to them.
 *
 * The supervisor is agyctl itself (a hidden subcommand), in its own session
 * (setsid: no controlling terminal, so no SIGHUP when an SSH session drops),
 * stdout/stderr to the 0700 record's log. It says "ready" on an extra pipe
 * once its socket listens; the spawner waits for that, bounded, and then
 * lets go of it entirely.
 *
 * A record holds a pid, the kernel's start time for it and a fingerprint of
 * its command line; a signal goes only to a process that matches all three
 * and runs as us, never to a pid of 1 or less (kill(-1) reaches every
 * process).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { signalGroup } from '../../acp/children.js';
import { AgyError, EXIT } from '../../core/errors.js';
import { agyctlEntryArgs } from '../../core/runtime.js';
import type { LoginRequest } from './contract.js';
import type { RecordedProcess, RecordPaths } from './record.js';

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

export const SUPERVISOR_COMMAND = '__login-supervisor';
export const READY_FD = 3;
const READY_WORD = 'ready';
const READY_TIMEOUT_MS = 30_000;

export interface SpawnOptions {
  paths: RecordPaths;
  /** Written to request.json (0600): the login's options; never the environment. */
  request: LoginRequest;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function logTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' / ');
  } catch {
    return '';
  }
}

export async function spawnSupervisor(o: SpawnOptions): Promise<number> {
  fs.writeFileSync(o.paths.request, `${JSON.stringify(o.request)}\n`, { mode: 0o600 });
  fs.chmodSync(o.paths.request, 0o600);
  const logFd = fs.openSync(o.paths.log, 'w', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...agyctlEntryArgs(), SUPERVISOR_COMMAND, '--record', o.paths.dir], {
      detached: true,
      stdio: ['ignore', logFd, logFd, 'pipe'],
      env: o.env,
      cwd: o.cwd,
    });
  } finally {
    fs.closeSync(logFd);
  }
  const pid = child.pid;
  const pipe = child.stdio[READY_FD] as Readable;
  const ok = await new Promise<boolean>((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
    pipe.on('data', (b: Buffer) => {
      text += b.toString();
      if (text.includes(READY_WORD)) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    pipe.on('error', () => undefined);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(text.includes(READY_WORD));
    });
    child.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  pipe.destroy();
  child.unref();
  if (!ok || pid === undefined) {
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    const said = logTail(o.paths.log);
    throw new AgyError(
      EXIT.internal,
      'login-supervisor-failed',
      `The login supervisor did not start${said ? `: ${said}` : '.'}`,
      { hint: `see ${o.paths.log}` },
    );
  }
  return pid;
}

/** In the supervisor: tell the spawner the socket listens, then close the pipe (the spawner may be gone already). */
export function signalReady(): void {
  try {
    fs.writeSync(READY_FD, `${READY_WORD}\n`);
    fs.closeSync(READY_FD);
  } catch {
    /* nobody is waiting any more */
  }
}
