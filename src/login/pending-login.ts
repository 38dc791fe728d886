/**
 * A recorded login seen from outside its supervisor: whether it is still
 * alive, cleaning up after a supervisor that died (its server's process
 * group, its shim dirs, its socket), waiting for its end, cancelling it,
 * handing it a pasted redirect; and the one-line reminder other commands
 * print (stderr) when this state dir has a login pending, e.g. after an SSH
 * session dropped mid-login: cheap, one small file read (from a record dir
 * checked as `login` checks it), no socket, no cleanup.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tempRoot } from '../core/paths.js';
import { pause } from '../util/deadline.js';
import { formatDuration } from '../util/duration.js';
import { isRecordedProcess } from '../util/os/process.js';
import type { FinishAnswer } from './events.js';
import { request } from './ipc.js';
import {
  checkOurSocket,
  checkRecordDir,
  isPending,
  type LoginState,
  type RecordPaths,
  readState,
  recordPaths,
  SUPERVISOR_DIED,
  writeState,
} from './record.js';
import { isLoginDirName } from './shims.js';
import { killRecorded, SUPERVISOR_COMMAND } from './supervisor.js';

const CANCEL_ANSWER_MS = 5_000;
/** The login stops its server within its own grace and kill delay (~6 s); allow more. */
const CANCEL_WAIT_MS = 20_000;
const FINISH_ANSWER_MS = 30_000;
const POLL_MS = 100;
/** How often a waiter pings the supervisor (well under any orphan grace). */
const ASK_EVERY_MS = 10_000;

export type Liveness =
  | { kind: 'none' }
  | { kind: 'pending'; state: LoginState }
  | { kind: 'ended'; state: LoginState }
  | { kind: 'died'; state: LoginState };

/** A supervisor is the process the record names: its pid, start time and command line (`__login-supervisor --record <this dir>`). */
function supervisorOf(state: LoginState) {
  return { pid: state.pid, start: state.pidStart, ...(state.pidCmd ? { cmd: state.pidCmd } : {}) };
}

const isSupervisorArgv = (argv: string[]): boolean => argv.includes(SUPERVISOR_COMMAND);

export function supervisorAlive(state: LoginState): boolean {
  return isRecordedProcess(supervisorOf(state), isSupervisorArgv);
}

/**
 * A shim dir the record names is removed only when it is one of ours: a
 * login dir by name, a real directory of ours, directly under a temp root
 * this environment uses (never some other `agyctl-login-*` path).
 */
function removeShimDir(dir: string, env: NodeJS.ProcessEnv): void {
  if (!path.isAbsolute(dir) || !isLoginDirName(path.basename(dir))) return;
  const parent = path.dirname(dir);
  if (![tempRoot(env), os.tmpdir(), '/tmp'].some((root) => path.resolve(root) === parent)) return;
  try {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory() || st.uid !== process.getuid?.()) return;
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    /* gone already */
  }
}

/** The record's state; a pending one whose supervisor is gone is cleaned up and reported as died (once; later reads see the recorded outcome). */
export function inspect(paths: RecordPaths, env: NodeJS.ProcessEnv = process.env): Liveness {
  const state = readState(paths);
  if (!state) return { kind: 'none' };
  if (!isPending(state)) return { kind: 'ended', state };
  if (supervisorAlive(state)) return { kind: 'pending', state };
  cleanupAfter(paths, state, env);
  return { kind: 'died', state };
}

/** Kill what a dead (or hung) supervisor left: its server's group, its own group, its shim dirs, its socket; record the outcome. */
export function cleanupAfter(paths: RecordPaths, state: LoginState, env: NodeJS.ProcessEnv = process.env): void {
  if (state.server) killRecorded(state.server);
  killRecorded(supervisorOf(state), isSupervisorArgv);
  for (const dir of state.shimDirs ?? []) removeShimDir(dir, env);
  try {
    if (checkOurSocket(paths)) fs.rmSync(paths.socket, { force: true });
  } catch {
    /* not ours: leave it */
  }
  state.phase = 'done';
  state.outcome = {
    exit: 4,
    code: SUPERVISOR_DIED,
    message: `The login supervisor (pid ${state.pid}) died before the login ended; its server was stopped.`,
    hint: 'run `agyctl login` again for a fresh URL (see the supervisor.log next to the record for why it died)',
    endedAt: Date.now(),
  };
  delete state.shimDirs;
  try {
    writeState(paths, state);
  } catch {
    /* the record dir is gone: nothing to report later */
  }
}

/** Poll the record until the login has ended (the supervisor records its outcome), at most timeoutMs. */
export async function waitEnded(
  paths: RecordPaths,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<LoginState | undefined> {
  const until = Date.now() + timeoutMs;
  let askedAt = 0;
  for (;;) {
    const seen = inspect(paths);
    if (seen.kind === 'ended' || seen.kind === 'died') return seen.state;
    // A waiter asks after the login now and then: a login whose SSH session went (connect's) does not give
    // up on itself while someone (connect, reconnected) is following it.
    if (seen.kind === 'pending' && Date.now() - askedAt > ASK_EVERY_MS && checkOurSocket(paths)) {
      askedAt = Date.now();
      void request(paths.socket, { op: 'ping' }, ASK_EVERY_MS);
    }
    if (seen.kind === 'none' || Date.now() > until || signal?.aborted) return undefined;
    await pause(POLL_MS, { signal });
  }
}

/** Ask the supervisor to cancel and wait for it to end; a supervisor that does not stop in time is killed with its server. */
export async function cancelPending(paths: RecordPaths, state: LoginState): Promise<{ forced: boolean }> {
  if (checkOurSocket(paths)) await request(paths.socket, { op: 'cancel' }, CANCEL_ANSWER_MS);
  const until = Date.now() + CANCEL_WAIT_MS;
  const ended = await waitEnded(paths, CANCEL_WAIT_MS);
  // The outcome is recorded after the server stopped; the supervisor itself exits right after.
  while (ended && supervisorAlive(state) && Date.now() < until) await pause(POLL_MS);
  if (ended && !supervisorAlive(state)) return { forced: false };
  cleanupAfter(paths, state);
  return { forced: true };
}

export async function deliver(paths: RecordPaths, line: string): Promise<FinishAnswer | undefined> {
  if (!checkRecordDir(paths) || !checkOurSocket(paths)) return undefined;
  return request<FinishAnswer>(paths.socket, { op: 'finish', line }, FINISH_ANSWER_MS);
}

export function pendingLoginNotice(env: NodeJS.ProcessEnv, stateDir: string): string | undefined {
  let state: ReturnType<typeof readState>;
  try {
    state = readState(recordPaths(env, stateDir));
  } catch {
    return undefined;
  }
  if (!state || !isPending(state) || !supervisorAlive(state)) return undefined;
  const left = formatDuration(Math.max(0, state.deadline - Date.now()));
  return `note: a login is pending for this state dir (${left} left${state.port ? `, port ${state.port}` : ''}); see \`agyctl login status\``;
}
