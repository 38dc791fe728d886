/**
 * The record of a login that runs under a supervisor: one private 0700
 * directory per state dir (so at most one pending login each), holding the
 * supervisor's socket, its log, the login's options and its state. Never
 * the token, a code or the environment: only what `login status` shows,
 * and (at the end of this file) how it reads to a person and to --json.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT } from '../core/errors.js';
import { homeDir, tempRoot } from '../core/paths.js';
import { formatDuration } from '../util/duration.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import type { ProcessIdentity } from '../util/os/process.js';
import { lstatOrNull } from '../util/os/safe-fs.js';
import { sanitizeForTerminal } from '../util/terminal-text.js';

/** A unix socket path must fit in sun_path (108 bytes on Linux); keep a margin. */
const MAX_SOCKET_PATH = 100;

/**
 * The account a sign-in ended with, in the server's words (sanitised and redacted): `label` as the server names it,
 * `email` when it gives one. `source` says who named it: `server` (auth/status or its push) or `google_accounts.json`
 * (gemini-cli's own record, read locally).
 */
export interface SignedInAccount {
  label: string;
  email: string | null;
  source: 'server' | 'google_accounts.json';
}

export type Phase = 'starting' | 'waiting' | 'signed-in' | 'done';

/** What a record says about one process it started. */
export type RecordedProcess = ProcessIdentity;

export interface Outcome {
  exit: number;
  code?: string;
  message?: string;
  hint?: string;
  details?: Record<string, unknown>;
  endedAt: number;
}

/** The outcome of a login stopped by `agyctl login cancel` (or Ctrl-C of the attached login): exit 130, code `login-cancelled`. */
export const CANCELLED: Omit<Outcome, 'endedAt'> = {
  exit: EXIT.interrupted,
  code: 'login-cancelled',
  message: 'cancelled (agyctl login cancel, or Ctrl-C of the attached login)',
};

/** The outcome of a login whose supervisor died (or hung) before it ended: recorded by whoever cleaned up after it. */
export const SUPERVISOR_DIED = 'login-supervisor-died';

export interface LoginState {
  version: 1;
  id: string;
  stateDir: string;
  pid: number;
  /** /proc start time of the supervisor: a recycled pid is not mistaken for it. */
  pidStart: string | undefined;
  /** Fingerprint of the supervisor's command line (process.ts): another process with that pid and start is not it. */
  pidCmd?: string;
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
  mode?: 'loopback' | 'code-entry' | 'device';
  server?: RecordedProcess;
  shimDirs?: string[];
  /** Whom the login signed in, as the server (or gemini-cli's record) named it: shown by `login status`. */
  account?: SignedInAccount;
  outcome?: Outcome;
}

export interface RecordPaths {
  dir: string;
  socket: string;
  state: string;
  request: string;
  log: string;
}

/** The five paths of a record directory. */
export function recordPathsIn(dir: string): RecordPaths {
  return {
    dir,
    socket: path.join(dir, 'sock'),
    state: path.join(dir, 'state.json'),
    request: path.join(dir, 'request.json'),
    log: path.join(dir, 'supervisor.log'),
  };
}

function stateBase(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : undefined;
  return path.join(xdg ?? path.join(homeDir(env), '.local', 'state'), 'agyctl', 'logins');
}

/** $XDG_RUNTIME_DIR when it is a real directory of ours that only we can enter (systemd's /run/user/<uid>). */
function runtimeBase(env: NodeJS.ProcessEnv): string | undefined {
  const dir = env.XDG_RUNTIME_DIR;
  if (!dir || !path.isAbsolute(dir)) return undefined;
  const st = lstatOrNull(dir);
  const uid = process.getuid?.();
  if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) return undefined;
  return path.join(dir, 'agyctl', 'logins');
}

const fits = (dir: string): boolean => Buffer.byteLength(path.join(dir, 'sock')) <= MAX_SOCKET_PATH;

/**
 * `$XDG_STATE_HOME/agyctl/logins/<hash of the state dir>`; when that is too
 * long for a socket path, the same under $XDG_RUNTIME_DIR, else under
 * `$TMPDIR/agyctl-<uid>`. Refused (exit 2) when none fits: libuv would cut
 * the socket path short and listen somewhere else.
 */
export function recordPaths(env: NodeJS.ProcessEnv, stateDir: string): RecordPaths {
  const hash = crypto.createHash('sha256').update(path.resolve(stateDir)).digest('hex').slice(0, 16);
  const runtime = runtimeBase(env);
  const bases = [
    stateBase(env),
    ...(runtime ? [runtime] : []),
    path.join(tempRoot(env), `agyctl-${process.getuid?.() ?? 'u'}`, 'logins'),
  ];
  const dir = bases.map((b) => path.join(b, hash)).find(fits);
  if (!dir)
    throw new AgyError(
      EXIT.usage,
      'login-record-path-too-long',
      `Every place for the login record is too long for a unix socket path (${MAX_SOCKET_PATH} bytes): ${bases.map((b) => path.join(b, hash, 'sock')).join(', ')}.`,
      { hint: 'set XDG_RUNTIME_DIR (or TMPDIR, or XDG_STATE_HOME) to a shorter directory of yours' },
    );
  return recordPathsIn(dir);
}

/** Directories between the record and the base we own (agyctl/logins, or agyctl-<uid>/logins under $TMPDIR) must be ours and not writable by others. */
const CHECKED_PARENTS = 2;

function unsafe(file: string, why: string): AgyError {
  return new AgyError(EXIT.usage, 'login-record-unsafe', `${file} ${why}, so it cannot hold a login record.`, {
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
  const st = fs.lstatSync(paths.dir);
  if (st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) !== 0) fs.chmodSync(paths.dir, 0o700);
  checkRecordDir(paths);
}

/**
 * Before anything reads a record, connects to its socket or acts on it:
 * the directory is ours, a real directory, 0700, its own parents ours and
 * not writable by others, and the one above those not open to others
 * (unless sticky, as /tmp is). False when there is no record dir at all.
 */
export function checkRecordDir(paths: RecordPaths): boolean {
  const uid = process.getuid?.();
  let dir = paths.dir;
  for (let i = 0; i <= CHECKED_PARENTS + 1; i++, dir = path.dirname(dir)) {
    const st = lstatOrNull(dir);
    if (!st) {
      if (i === 0) return false;
      throw unsafe(dir, 'is missing');
    }
    if (!st.isDirectory()) throw unsafe(dir, st.isSymbolicLink() ? 'is a symbolic link' : 'is not a directory');
    if (i > CHECKED_PARENTS) {
      if ((st.mode & 0o002) !== 0 && (st.mode & 0o1000) === 0) throw unsafe(dir, 'is writable by everyone');
      if (uid !== undefined && st.uid !== uid && st.uid !== 0) throw unsafe(dir, 'is not owned by you');
      continue;
    }
    if (uid !== undefined && st.uid !== uid) throw unsafe(dir, 'is not owned by you');
    if (i === 0 && (st.mode & 0o077) !== 0) throw unsafe(dir, 'is open to other users (not mode 0700)');
    if ((st.mode & 0o002) !== 0) throw unsafe(dir, 'is writable by everyone');
    if ((st.mode & 0o020) !== 0) throw unsafe(dir, 'is writable by its group');
  }
  return true;
}

/** The record's socket is a socket of ours (checked before every connect). */
export function checkOurSocket(paths: RecordPaths): boolean {
  const st = lstatOrNull(paths.socket);
  if (!st) return false;
  if (!st.isSocket()) throw unsafe(paths.socket, 'is not a socket');
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw unsafe(paths.socket, 'is not owned by you');
  return true;
}

const MAX_STATE_BYTES = 256 * 1024;

/**
 * The recorded state, read only from a regular file of ours (never through
 * a link) in a checked record dir; undefined when there is none or it is
 * not a state this version wrote.
 */
export function readState(paths: RecordPaths): LoginState | undefined {
  if (!checkRecordDir(paths)) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(paths.state, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw unsafe(paths.state, 'is a symbolic link');
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw unsafe(paths.state, 'is not a regular file');
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) throw unsafe(paths.state, 'is not owned by you');
    if (st.size > MAX_STATE_BYTES) return undefined;
    return parseState(fs.readFileSync(fd, 'utf8'));
  } finally {
    fs.closeSync(fd);
  }
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const optString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** A state this version wrote: the fields every reader relies on have their types. */
export function parseState(text: string): LoginState | undefined {
  let v: Partial<LoginState> & Record<string, unknown>;
  try {
    v = JSON.parse(text) as typeof v;
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object' || v.version !== 1 || typeof v.id !== 'string' || typeof v.stateDir !== 'string')
    return undefined;
  if (!isInt(v.pid) || !isInt(v.startedAt) || !isInt(v.deadline) || !isInt(v.endBy)) return undefined;
  if (!['starting', 'waiting', 'signed-in', 'done'].includes(String(v.phase))) return undefined;
  if (![v.pidStart, v.pidCmd, v.method, v.url, v.tunnel].every(optString)) return undefined;
  if (v.port !== undefined && !isInt(v.port)) return undefined;
  if (v.server !== undefined && (typeof v.server !== 'object' || !isInt(v.server?.pid))) return undefined;
  if (v.shimDirs !== undefined && !(Array.isArray(v.shimDirs) && v.shimDirs.every((d) => typeof d === 'string')))
    return undefined;
  if (v.outcome !== undefined && (typeof v.outcome !== 'object' || !isInt(v.outcome?.exit))) return undefined;
  return v as LoginState;
}

export function writeState(paths: RecordPaths, state: LoginState): void {
  writeFileAtomic(paths.state, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

export const isPending = (s: LoginState): boolean => s.phase !== 'done' && s.outcome === undefined;

// --- how a record reads to a person and to --json ---

export function timeLeft(state: LoginState): string {
  return formatDuration(Math.max(0, state.deadline - Date.now()));
}

/** Record text on its way to a terminal: one line, no control characters. */
export const terminalLine = (text: string): string => sanitizeForTerminal(text, { singleLine: true });

/** The lines that describe a pending login to a person (status, and the "already pending" refusal). */
export function describePending(state: LoginState): string[] {
  const lines = [
    `A login is pending for ${terminalLine(state.stateDir)} (${timeLeft(state)} left, supervisor pid ${state.pid}, ${state.phase}).`,
  ];
  if (state.url) lines.push(`Sign-in URL: ${terminalLine(state.url)}`);
  if (state.tunnel) lines.push(`Tunnel (port ${state.port}): ${terminalLine(state.tunnel)}`);
  else if (state.mode === 'code-entry')
    lines.push('This login uses code entry: no tunnel; give the code with `agyctl login finish CODE`.');
  else if (state.mode === 'device')
    lines.push('This login shows a page the server follows itself: no tunnel and nothing to paste.');
  return lines;
}

/** How `login status` (and the "already pending" refusal) reports a record: its liveness as the caller found it. */
export function statusData(state: LoginState, kind: 'pending' | 'ended' | 'died'): Record<string, unknown> {
  const status =
    kind === 'pending'
      ? 'pending'
      : kind === 'died' || state.outcome?.code === SUPERVISOR_DIED
        ? 'died'
        : state.outcome?.exit === 0
          ? 'succeeded'
          : state.outcome?.code === CANCELLED.code
            ? 'cancelled'
            : 'failed';
  return {
    status,
    id: state.id,
    stateDir: state.stateDir,
    pid: state.pid,
    phase: state.phase,
    method: state.method ?? null,
    url: state.url ?? null,
    port: state.port ?? null,
    tunnel: state.tunnel ?? null,
    startedAt: new Date(state.startedAt).toISOString(),
    deadline: new Date(state.deadline).toISOString(),
    remainingS: Math.max(0, Math.round((state.deadline - Date.now()) / 1000)),
    account: recordedAccount(state.account),
    outcome: state.outcome
      ? {
          exit: state.outcome.exit,
          code: state.outcome.code ?? null,
          message: state.outcome.message ?? null,
          hint: state.outcome.hint ?? null,
          endedAt: new Date(state.outcome.endedAt).toISOString(),
        }
      : null,
  };
}

/** The recorded account, re-read as untrusted (the record is a file): strings only, one line, no control characters. */
export function recordedAccount(a: unknown): SignedInAccount | null {
  if (!a || typeof a !== 'object') return null;
  const { label, email, source } = a as Record<string, unknown>;
  if (typeof label !== 'string' || label === '') return null;
  return {
    label: terminalLine(label),
    email: typeof email === 'string' && email !== '' ? terminalLine(email) : null,
    source: source === 'google_accounts.json' ? 'google_accounts.json' : 'server',
  };
}
