/**
 * The record of a login that runs under a supervisor: one private 0700
 * directory per state dir (so at most one pending login each), holding the
 * supervisor's socket, its log, the login's options and its state. Never
 * the token, a code or the environment: only what `login status` shows.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT } from '../../core/errors.js';
import { homeDir, tempRoot } from '../../core/paths.js';
import { writeFileAtomic } from '../../util/atomic-write.js';

/** A unix socket path must fit in sun_path (108 bytes on Linux); keep a margin. */
const MAX_SOCKET_PATH = 100;

export type Phase = 'starting' | 'waiting' | 'signed-in' | 'done';

export interface Outcome {
  exit: number;
  code?: string;
  message?: string;
  hint?: string;
  details?: Record<string, unknown>;
  endedAt: number;
}

export interface LoginState {
  version: 1;
  id: string;
  stateDir: string;
  pid: number;
  /** /proc start time of the supervisor: a recycled pid is not mistaken for it. */
  pidStart: string | undefined;
  startedAt: number;
  /** When the sign-in wait ends (the login's --timeout); the proof may run a little past it. */
  deadline: number;
  /** The supervisor gives up by then whatever happens (the proof included): every client wait ends by it. */
  endBy: number;
  phase: Phase;
  method?: string;
  url?: string;
  port?: number;
  tunnel?: string;
  mode?: 'loopback' | 'code-entry';
  server?: { pid: number; start: string | undefined };
  shimDirs?: string[];
  outcome?: Outcome;
}

export interface RecordPaths {
  dir: string;
  socket: string;
  state: string;
  request: string;
  log: string;
}

function stateBase(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : undefined;
  return path.join(xdg ?? path.join(homeDir(env), '.local', 'state'), 'agyctl', 'logins');
}

/** `$XDG_STATE_HOME/agyctl/logins/<hash of the state dir>`, or a private temp dir when that path is too long for a socket. */
export function recordPaths(env: NodeJS.ProcessEnv, stateDir: string): RecordPaths {
  const hash = crypto.createHash('sha256').update(path.resolve(stateDir)).digest('hex').slice(0, 16);
  let dir = path.join(stateBase(env), hash);
  if (Buffer.byteLength(path.join(dir, 'sock')) > MAX_SOCKET_PATH)
    dir = path.join(tempRoot(env), `agyctl-${process.getuid?.() ?? 'u'}`, 'logins', hash);
  return {
    dir,
    socket: path.join(dir, 'sock'),
    state: path.join(dir, 'state.json'),
    request: path.join(dir, 'request.json'),
    log: path.join(dir, 'supervisor.log'),
  };
}

/** Directories between the record and the base we own (agyctl/logins, or agyctl-<uid>/logins under $TMPDIR) must be ours and not writable by others. */
const CHECKED_PARENTS = 2;

function unsafe(dir: string, why: string): AgyError {
  return new AgyError(EXIT.usage, 'login-record-unsafe', `${dir} ${why}, so it cannot hold a login record.`, {
    hint: `remove it (or fix its owner and mode), then run agyctl login again`,
  });
}

/** Create (or check) the record dir: ours, a real directory, mode 0700, in parents only we can change. */
export function ensureRecordDir(paths: RecordPaths): void {
  try {
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new AgyError(
      EXIT.usage,
      'login-record-unusable',
      `Cannot create the login record directory ${paths.dir} (${code}).`,
      { hint: 'make it writable, or set XDG_STATE_HOME to a directory you can write' },
    );
  }
  const uid = process.getuid?.();
  let dir = paths.dir;
  for (let i = 0; i <= CHECKED_PARENTS; i++, dir = path.dirname(dir)) {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory()) throw unsafe(dir, 'is not a directory');
    if (uid !== undefined && st.uid !== uid) throw unsafe(dir, 'is not owned by you');
    if (i > 0 && (st.mode & 0o002) !== 0) throw unsafe(dir, 'is writable by everyone');
  }
  if ((fs.lstatSync(paths.dir).mode & 0o077) !== 0) fs.chmodSync(paths.dir, 0o700);
}

export function readState(paths: RecordPaths): LoginState | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(paths.state, 'utf8')) as LoginState;
    return value && value.version === 1 && typeof value.pid === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

export function writeState(paths: RecordPaths, state: LoginState): void {
  writeFileAtomic(paths.state, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

export function removeRecord(paths: RecordPaths): void {
  fs.rmSync(paths.dir, { recursive: true, force: true });
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks), or undefined when the process is gone. */
export function procStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** The same process is still running (not a recycled pid, not a zombie). */
export function sameProcessAlive(pid: number, start: string | undefined): boolean {
  const now = procStart(pid);
  return now !== undefined && (start === undefined || now === start);
}

export const isPending = (s: LoginState): boolean => s.phase !== 'done' && s.outcome === undefined;
