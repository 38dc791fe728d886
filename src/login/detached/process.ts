/**
 * A login's processes: starting its supervisor, and killing the processes
 * a login record names (its supervisor, its server), never any other.
 *
 * The supervisor is agyctl itself (a hidden subcommand), in its own session
 * (setsid: no controlling terminal, so no SIGHUP when an SSH session drops),
 * stdout/stderr to the 0700 record's log. It says "ready" on an extra pipe
 * once its socket listens; the spawner waits for that, bounded, and then
 * lets go of it entirely.
 *
 * A record holds a pid, the kernel's start time for it and a fingerprint of
 * its command line; a signal goes only to a process that matches all three
 * and runs as us (`isRecordedProcess`, util/os/process.ts).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { signalGroup } from '../../acp/children.js';
import { AgyError, EXIT } from '../../core/errors.js';
import { agyctlEntryArgs } from '../../core/runtime.js';
import { isRecordedProcess, procStat } from '../../util/os/process.js';
import type { LoginRequest } from './contract.js';
import type { RecordedProcess, RecordPaths } from './record.js';

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

export async function spawnSupervisor(spawned: SpawnOptions): Promise<number> {
  const { paths } = spawned;
  fs.writeFileSync(paths.request, `${JSON.stringify(spawned.request)}\n`, { mode: 0o600 });
  fs.chmodSync(paths.request, 0o600);
  const logFd = fs.openSync(paths.log, 'w', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...agyctlEntryArgs(), SUPERVISOR_COMMAND, '--record', paths.dir], {
      detached: true,
      stdio: ['ignore', logFd, logFd, 'pipe'],
      env: spawned.env,
      cwd: spawned.cwd,
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
    const said = logTail(paths.log);
    throw new AgyError(
      EXIT.internal,
      'login-supervisor-failed',
      `The login supervisor did not start${said ? `: ${said}` : '.'}`,
      { hint: `see ${paths.log}` },
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
