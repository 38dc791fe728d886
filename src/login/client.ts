/**
 * The foreground side of a login. Every interactive `agyctl login` runs its
 * server under a supervisor and attaches to it, so a dropped session
 * (SIGHUP) hands the login over for free: the foreground process simply
 * leaves. One pending login per state dir.
 *
 * Attached, it renders the login's events for its own terminal (the
 * printer it is given), shows the paste prompt with the countdown and
 * relays pasted lines (`login finish` semantics), and then either
 *  - returns the login's outcome (success, or its error with exit code),
 *  - cancels it (Ctrl-C / SIGTERM: the supervisor stops the server, 130),
 *  - or, on SIGHUP (a dropped SSH session), just lets go: the supervisor
 *    keeps the login going and `agyctl login status` finds it.
 * With `--detach` it lets go on purpose as soon as the login waits for the browser.
 *
 * And a recorded login seen from outside its supervisor (below: what
 * `login status | finish | cancel` and a new login use): whether it is still
 * alive, cleaning up after a supervisor that died (its server's process
 * group, its shim dirs, its socket), waiting for its end, cancelling it,
 * handing it a pasted redirect; and the one-line reminder other commands
 * print (stderr) when this state dir has a login pending, e.g. after an SSH
 * session dropped mid-login: cheap, one small file read (from a record dir
 * checked as `login` checks it), no socket, no cleanup.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgyError, EXIT, InterruptedError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { tempRoot } from '../core/paths.js';
import { pause } from '../util/deadline.js';
import { holderLine, parseHolderLine, takePidLock } from '../util/os/pid-lock.js';
import { isRecordedProcess, sameProcessAlive } from '../util/os/process.js';
import type { FinishAnswer, LoginEvent, LoginRequest, ShowLoginEvent } from './events.js';
import { type PasteReader, pasteWhat, promptsOnTty, startPasteReader } from './paste.js';
import {
  checkOurSocket,
  checkRecordDir,
  describePending,
  ensureRecordDir,
  isPending,
  type LoginState,
  type Outcome,
  type RecordPaths,
  readState,
  recordPaths,
  SUPERVISOR_DIED,
  statusData,
  timeLeft,
  writeState,
} from './record.js';
import { isLoginDirName } from './shims.js';
import { attach, type Frame, killRecorded, request, SUPERVISOR_COMMAND, spawnSupervisor } from './supervisor.js';

/** Start-up may take the server's initialize deadline before the wait begins; the proof has two steps of its own deadline. */
const STARTUP_ALLOWANCE_MS = 60_000;
const HARD_END_MARGIN_MS = 60_000;

/** What the supervisor runs: written to the 0600 request.json with the ids and deadlines added. */
export type LoginAsked = Pick<LoginRequest, 'opts' | 'login'>;

/** The message is one line; the URL and tunnel stand in `pending` (and, for a person, on the lines before it). */
export function pendingError(state: LoginState): AgyError {
  const [first] = describePending(state);
  return new AgyError(EXIT.usage, 'login-pending', first!, {
    hint: 'sign in with that URL (through that tunnel) and deliver the redirect with `agyctl login finish`, watch it with `agyctl login status`, stop it with `agyctl login cancel`, or start over with `agyctl login --restart`',
    details: { pending: statusData(state, 'pending') },
  });
}

/** This terminal's printer of the login's events (src/cli/commands/login/printers.ts). */
export interface EventPrinter {
  show: ShowLoginEvent;
  /** Whether showing this event writes anything here (the prompt is cleared and redrawn only around that). */
  writes(event: LoginEvent): boolean;
}

export async function startLogin(io: CommandIO, asked: LoginAsked, printer: EventPrinter): Promise<RelayResult> {
  const show = (e: LoginEvent) => printer.show(e);
  const paths = recordPaths(io.ctx.env, io.opts.stateDir);
  ensureRecordDir(paths);
  const release = claimStart(paths.dir, io.opts.stateDir);
  try {
    const seen = inspect(paths);
    if (seen.kind === 'pending') {
      if (!asked.login.restart) {
        void show({ event: 'pending', state: seen.state });
        throw pendingError(seen.state);
      }
      void show({ event: 'restarting', pid: seen.state.pid });
      await cancelPending(paths, seen.state);
      void show({ event: 'restarted', cancelled: seen.state.id });
    } else if (seen.kind === 'died') {
      void show({ event: 'previous-died', pid: seen.state.pid });
    }
    fs.rmSync(paths.state, { force: true });
    const request = makeRequest(io, asked);
    await spawnSupervisor({ paths, request, env: io.ctx.env, cwd: io.ctx.cwd });
    return await relayLogin(io, {
      paths,
      detach: asked.login.detached,
      endBy: request.hardDeadline,
      release,
      printer,
    });
  } finally {
    release();
  }
}

/**
 * Two logins started at the same moment both find no record; an exclusive
 * claim file (held until the supervisor has written its state) lets only one
 * through. A claim whose agyctl is gone is stale and taken over.
 */
function claimStart(dir: string, stateDir: string): () => void {
  const claim = takePidLock(path.join(dir, 'starting'), {
    content: holderLine(),
    parse: parseHolderLine,
    alive: (h) => h.pid !== process.pid && sameProcessAlive(h.pid, h.start),
  });
  if (claim.taken) return claim.release;
  const by = claim.why === 'held' && claim.holder ? ` (pid ${claim.holder.pid})` : '';
  throw new AgyError(EXIT.usage, 'login-pending', `Another agyctl login${by} is starting for ${stateDir}.`, {
    hint: 'see it with `agyctl login status` in a moment',
  });
}

function makeRequest(io: CommandIO, asked: LoginAsked): LoginRequest {
  const startedAt = Date.now();
  const { login } = asked;
  const deadline = startedAt + login.timeoutMs;
  return {
    ...asked,
    version: 1,
    id: crypto.randomBytes(6).toString('hex'),
    cwd: io.ctx.cwd,
    startedAt,
    deadline,
    hardDeadline: deadline + STARTUP_ALLOWANCE_MS + 2 * login.proofTimeoutMs + HARD_END_MARGIN_MS,
  };
}

// --- attached: the login's terminal, relayed ---

const ATTACH_TIMEOUT_MS = 10_000;
/** Past the supervisor's own end, a silent supervisor is treated as dead after this (status --wait: as stuck). */
export const STUCK_MARGIN_MS = 30_000;

export type RelayResult =
  | { kind: 'ended'; outcome: Omit<Outcome, 'endedAt'> }
  | { kind: 'detached'; state: LoginState }
  | { kind: 'hangup' };

/** The record of the login this terminal follows, how long, and where its own steps go. */
export interface TerminalRelayOptions {
  paths: RecordPaths;
  detach: boolean;
  /** The supervisor gives up by then; past it (plus a margin) a silent supervisor is treated as dead. */
  endBy: number;
  /** Called once the supervisor's state is on record (lets a concurrent login see it pending). */
  release(): void;
  /** The printer of this terminal: every event of the login, and the foreground's own. */
  printer: EventPrinter;
}

/** The login's recorded error, as the error this process reports (same exit, code, message and hint). */
export function outcomeError(outcome: Omit<Outcome, 'endedAt'>): AgyError {
  const { exit, code, message, hint, details } = outcome;
  return new AgyError(
    exit as AgyError['exit'],
    code ?? 'login-failed',
    message ?? `The login ended with exit code ${exit}.`,
    {
      ...(hint ? { hint } : {}),
      ...(details ? { details } : {}),
    },
  );
}

export async function relayLogin(io: CommandIO, relay: TerminalRelayOptions): Promise<RelayResult> {
  const { paths, printer } = relay;
  const show = (e: LoginEvent) => printer.show(e);
  const { out, ctx } = io;
  let paste: PasteReader | undefined;
  let lateLines: PasteReader | undefined;
  let deadline: number | undefined;
  let codeEntry = false;
  let gone = false; // after SIGHUP: write nothing more to the dead terminal
  let settle!: (r: RelayResult | 'cancel') => void;
  const settled = new Promise<RelayResult | 'cancel'>((r) => (settle = r));

  const stopPaste = (): void => {
    paste?.close();
    paste = undefined;
  };
  // A paste after the sign-in arrived (through the tunnel, or an earlier paste) would otherwise go unread without a word.
  const answerLatePastes = (): void => {
    if (lateLines || gone) return;
    lateLines = startPasteReader(io, undefined, (line) => {
      if (line.trim() !== '') say({ event: 'already-arrived' });
      return undefined;
    });
  };
  // One event at a time, in order: a URL's QR code takes a moment, and the lines after it wait for it.
  let rendering: Promise<void> = Promise.resolve();
  const say = (e: LoginEvent): void => {
    rendering = rendering.then(async () => {
      if (gone) return;
      const prompting = paste !== undefined && promptsOnTty(io) && printer.writes(e);
      if (prompting) out.clearStatus();
      await show(e);
      if (prompting) paste?.refresh();
    });
  };
  const prompt = {
    text: () => pasteWhat(codeEntry),
    deadline: () => deadline,
  };
  const startPaste = (): void => {
    if (paste || gone) return;
    paste = startPasteReader(io, prompt, (line) => {
      if (line.trim() === '') return undefined;
      // The answer also arrives as a redirect-* / code-* event, rendered like any other.
      // The prompt waits for it: drawn again only when the paste was not delivered, or when the
      // server asks again (a new URL after a code it could not use); `authenticated` ends it.
      void deliver(paths, line).then((answer) => {
        if (!answer) say({ event: 'undelivered' });
        if (!answer?.ok && !answer?.arrived) paste?.resume();
      });
      return false;
    });
  };

  // The prompt reacts to an event after every event before it is shown, and just before its own
  // lines (the prompt is gone before "Signed in" is written).
  const onFrame = (frame: Frame): void => {
    if (frame.t !== 'event') return;
    const e = frame.event;
    rendering = rendering.then(() => onEvent(e));
    say(e);
  };
  const onEvent = (e: LoginEvent): void => {
    if (gone) return;
    if (e.event === 'url') {
      codeEntry = e.mode === 'code-entry';
      paste?.resume();
    } else if (e.event === 'waiting') {
      if (deadline === undefined) deadline = Date.now() + e.remainingS * 1000;
      if (relay.detach) {
        const seen = inspect(paths);
        if (seen.kind === 'pending') settle({ kind: 'detached', state: seen.state });
      } else startPaste();
    } else if (e.event === 'authenticated' && paste) {
      stopPaste();
      answerLatePastes();
    }
  };

  const attachment = checkOurSocket(paths) ? await attach(paths.socket, onFrame, ATTACH_TIMEOUT_MS) : undefined;
  if (!attachment) return afterBreak(paths);
  const release = ctx.claimHangup?.(() => {
    gone = true;
    settle({ kind: 'hangup' });
  });
  const onAbort = (): void => settle('cancel');
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  if (ctx.signal.aborted) onAbort();
  relay.release();
  void attachment.ended.then(async (outcome) => {
    await rendering;
    settle(outcome ? { kind: 'ended', outcome } : afterBreak(paths));
  });
  const stuck = setTimeout(
    () => settle(afterBreak(paths, true)),
    Math.max(0, relay.endBy - Date.now()) + STUCK_MARGIN_MS,
  );
  try {
    const first = await settled;
    if (first !== 'cancel') return first;
    stopPaste();
    await show({ event: 'cancelling' });
    const seen = inspect(paths);
    if (seen.kind === 'pending') await cancelPending(paths, seen.state);
    throw new InterruptedError();
  } finally {
    clearTimeout(stuck);
    stopPaste();
    lateLines?.close();
    release?.();
    ctx.signal.removeEventListener('abort', onAbort);
    attachment.close();
  }
}

/** The connection broke without an end frame: the outcome was recorded just then, or the supervisor died. */
function afterBreak(paths: RecordPaths, overdue = false): RelayResult {
  const seen = inspect(paths);
  if (seen.kind === 'ended' || seen.kind === 'died') return { kind: 'ended', outcome: seen.state.outcome! };
  // Alive but unreachable (or still running past its own end): it cannot be finished, so stop it.
  if (seen.kind === 'pending') cleanupAfter(paths, seen.state);
  if (overdue)
    return {
      kind: 'ended',
      outcome: {
        exit: EXIT.timeout,
        code: 'timeout',
        message: 'The login supervisor did not end by its own deadline; it was stopped.',
        hint: 'run `agyctl login` again',
      },
    };
  return {
    kind: 'ended',
    outcome: {
      exit: EXIT.server,
      code: SUPERVISOR_DIED,
      message: 'Lost the connection to the login supervisor; the login was stopped.',
      hint: 'run `agyctl login` again',
    },
  };
}

// --- a recorded login seen from outside its supervisor ---

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
  const left = timeLeft(state);
  return `note: a login is pending for this state dir (${left} left${state.port ? `, port ${state.port}` : ''}); see \`agyctl login status\``;
}
