/**
 * The login supervisor: the process that owns a login's server, shim dir
 * and deadline, in its own session with no terminal, so that a dropped SSH
 * session cannot end it. It has no terminal and renders nothing: every
 * event the login emits is kept as a frame and streamed to attached
 * clients, which render it for their own terminal. Pasted redirects arrive
 * over the socket and are delivered to the running login's paste handling
 * (the same checks for every paste: state, port, path, code; one delivery).
 *
 * It is agyctl itself (a hidden subcommand), in its own session (setsid: no
 * controlling terminal, so no SIGHUP when an SSH session drops),
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
import net from 'node:net';
import type { Readable } from 'node:stream';
import { signalGroup } from '../acp/children.js';
import { AgyError, EXIT } from '../core/errors.js';
import { PLAIN, type Reporter } from '../core/io.js';
import { agyctlEntryArgs } from '../core/runtime.js';
import { isRecordedProcess, procStat, recordProcess } from '../util/os/process.js';
import { enterableCwd, relayFd, TRACE_FD_VAR } from '../util/os/tree-owner.js';
import {
  ANSWER_EVENTS,
  type FinishAnswer,
  isPublicLoginEvent,
  type LoginEvent,
  type LoginRequest,
  type ShowLoginEvent,
} from './events.js';
import {
  CANCELLED,
  type LoginState,
  type Outcome,
  type RecordedProcess,
  type RecordPaths,
  writeState,
} from './record.js';
import { liveShimDirs } from './shims.js';
import type { Pastes } from './wait.js';

// --- starting it, and the processes a record names ---

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
  // Root's --trace file, handed to the owner's agyctl as a descriptor (root's path may be closed to it), goes on to the supervisor.
  const traceFd = relayFd(spawned.env, TRACE_FD_VAR);
  const env = traceFd === undefined ? spawned.env : { ...spawned.env, [TRACE_FD_VAR]: String(READY_FD + 1) };
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...agyctlEntryArgs(), SUPERVISOR_COMMAND, '--record', paths.dir], {
      detached: true,
      stdio: ['ignore', logFd, logFd, 'pipe', ...(traceFd === undefined ? [] : [traceFd])],
      env,
      cwd: enterableCwd(spawned.cwd),
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

// --- running it ---

/** A delivery answers within the listener's own 15 s bound; allow a margin. */
const FINISH_ANSWER_MS = 20_000;
/** A runaway login never keeps more events than this in memory. */
const MAX_FRAMES = 5_000;

/** What the supervisor hands the login it runs. */
export interface LoginPorts {
  signal: AbortSignal;
  /** Every event the login emits: tracked, kept and streamed to the attached clients. */
  show: ShowLoginEvent;
  /** Pasted lines delivered over the socket (`login finish`, an attached prompt). */
  pastes: Pastes;
  /** The reporter the layers under the login say their sentences to: each one a `said` event. */
  out: Reporter;
}

export interface SupervisorOptions {
  paths: RecordPaths;
  state: LoginState;
  /** The login's own hard end (sign-in deadline + proof + margin): past it the supervisor cancels. */
  hardDeadline: number;
  /** Aborted by SIGTERM/SIGINT to the supervisor. */
  signal: AbortSignal;
  /** Called once the socket listens (the spawner waits for this). */
  onReady(): void;
  /**
   * Set by `connect` (AGYCTL_LOGIN_ORPHAN_GRACE): once every attached login has gone (its SSH session
   * closed) and no one asks after the login for this long, the login cancels itself instead of waiting
   * out its deadline. A `login status --wait` or `login finish` (connect reconnecting) counts as asking.
   */
  orphanGraceMs?: number;
  run(ports: LoginPorts): Promise<Omit<Outcome, 'endedAt'>>;
}

/**
 * The reporter of a process with no terminal: every sentence becomes a `said` event, rendered (or
 * left out, --verbose) by the client's printer. Plain, since colour is the client terminal's business.
 */
function saidReporter(show: ShowLoginEvent): Reporter {
  const say = (how: 'print' | 'info' | 'warn' | 'verbose', text: string, verbatim?: boolean): void =>
    void show({ event: 'said', how, text, ...(verbatim ? { verbatim: true } : {}) });
  return {
    c: PLAIN,
    e: PLAIN,
    json: false,
    stderrIsTTY: false,
    stdoutIsTTY: false,
    stderrEscapes: false,
    print: (line = '', opts = {}) => say('print', line, opts.verbatim),
    info: (text, opts = {}) => say('info', text, opts.verbatim),
    warn: (text) => say('warn', text),
    verbose: (text) => say('verbose', text),
    server: (note) => void show({ event: 'server-note', note }),
    status: () => undefined,
    clearStatus: () => undefined,
    event: () => undefined,
    error: (text) => say('warn', text),
  };
}

export async function runSupervisor(supervised: SupervisorOptions): Promise<Outcome> {
  const { state, paths } = supervised;
  const frames: Frame[] = [];
  const clients = new Set<net.Socket>();
  const controller = new AbortController();
  const eventWaiters = new Set<(e: LoginEvent) => void>();
  let finishChain: Promise<unknown> = Promise.resolve();
  const pasteListeners = new Set<(line: string) => void>();
  const pastes: Pastes = {
    listen(onLine) {
      pasteListeners.add(onLine);
      return () => pasteListeners.delete(onLine);
    },
  };
  /** `login cancel` (or Ctrl-C of an attached login) asked: the end is a cancellation, not a failure. */
  let cancelRequested = false;

  const save = (): void => {
    try {
      writeState(paths, state);
    } catch {
      /* the record was removed under us (cancel --force); the login goes on */
    }
  };
  const broadcast = (frame: Frame): void => {
    if (frames.length < MAX_FRAMES) frames.push(frame);
    for (const c of clients) sendLine(c, frame);
  };
  const show = (event: LoginEvent): void => {
    // On record before any client hears of it (detach reads the record on `waiting`).
    if (isPublicLoginEvent(event)) trackState(state, event, save);
    broadcast({ t: 'event', event });
    for (const w of eventWaiters) w(event);
  };

  const finish = (line: string): Promise<FinishAnswer> => {
    // A paste can reach the socket after the login ended and before the socket closes: a login that ended
    // signed in is answered as one whose sign-in arrived, not as one that never waited.
    const signedIn = state.phase === 'signed-in' || (state.phase === 'done' && state.outcome?.exit === EXIT.ok);
    if (signedIn) return Promise.resolve({ ok: false, arrived: true, reason: 'the sign-in already arrived' });
    if (state.phase === 'done') return Promise.resolve({ ok: false, reason: 'the login has already ended' });
    if (state.phase !== 'waiting')
      return Promise.resolve({ ok: false, reason: 'the login is not waiting for a redirect yet' });
    return new Promise((resolve) => {
      const timer = setTimeout(() => done({ ok: false, reason: 'the login did not answer in time' }), FINISH_ANSWER_MS);
      const waiter = (e: LoginEvent): void => {
        if (ANSWER_EVENTS.has(e.event)) done(answerFor(e));
      };
      const done = (answer: FinishAnswer): void => {
        clearTimeout(timer);
        eventWaiters.delete(waiter);
        resolve(answer);
      };
      eventWaiters.add(waiter);
      const one = line.replace(/[\r\n]+/g, ' ');
      for (const deliver of pasteListeners) deliver(one);
    });
  };

  let orphanTimer: NodeJS.Timeout | undefined;
  let everAttached = false;
  /** No attached login and no one asking: the grace starts (again). */
  const watchOrphan = (): void => {
    clearTimeout(orphanTimer);
    orphanTimer = undefined;
    const grace = supervised.orphanGraceMs;
    if (grace === undefined || !everAttached || clients.size > 0 || state.phase === 'done') return;
    orphanTimer = setTimeout(() => {
      cancelRequested = true;
      controller.abort('cancel');
    }, grace);
  };
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (clients.delete(socket)) watchOrphan();
    });
    onJsonLines(socket, (value) => {
      const req = value as Request;
      if (req.op === 'attach') {
        everAttached = true;
        clearTimeout(orphanTimer);
        clients.add(socket);
        for (const f of frames) sendLine(socket, f);
      } else if (req.op === 'finish' && typeof req.line === 'string') {
        const answer = finishChain.then(() => finish(req.line));
        finishChain = answer;
        void answer.then((a) => sendLine(socket, a));
      } else if (req.op === 'cancel') {
        cancelRequested = true;
        controller.abort('cancel');
        sendLine(socket, { ok: true });
      } else if (req.op === 'ping') sendLine(socket, { ok: true, pid: process.pid, phase: state.phase });
      else socket.destroy();
      // Someone asked after the login: an orphan's grace starts again.
      if (req.op !== 'attach') watchOrphan();
    });
  });
  fs.rmSync(paths.socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(paths.socket, () => resolve());
  });
  fs.chmodSync(paths.socket, 0o600);
  const socketIno = fs.statSync(paths.socket).ino;
  save();
  supervised.onReady();

  const onOuterAbort = (): void => controller.abort('cancel');
  supervised.signal.addEventListener('abort', onOuterAbort, { once: true });
  if (supervised.signal.aborted) controller.abort('cancel');
  const watchdog = setTimeout(() => controller.abort('deadline'), Math.max(0, supervised.hardDeadline - Date.now()));
  let result: Omit<Outcome, 'endedAt'>;
  try {
    result = await supervised.run({ signal: controller.signal, show, pastes, out: saidReporter(show) });
  } finally {
    clearTimeout(watchdog);
    clearTimeout(orphanTimer);
    supervised.signal.removeEventListener('abort', onOuterAbort);
  }
  const ended = cancelRequested && result.exit === EXIT.interrupted ? CANCELLED : result;
  const outcome: Outcome = { ...ended, endedAt: Date.now() };
  state.phase = 'done';
  state.outcome = outcome;
  delete state.shimDirs;
  save();
  broadcast({ t: 'end', outcome: ended });
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const c of clients) c.end();
  });
  // A next login may already listen at that path: remove only our own socket.
  try {
    if (fs.statSync(paths.socket).ino === socketIno) fs.rmSync(paths.socket, { force: true });
  } catch {
    /* already gone */
  }
  return outcome;
}

/** What a delivered paste got: the login's answer event, as `login finish` reports it. */
function answerFor(e: LoginEvent): FinishAnswer {
  switch (e.event) {
    case 'redirect-delivered':
      return { ok: true, status: e.status, event: e };
    case 'code-sent':
      return { ok: true, event: e };
    case 'redirect-rejected':
    case 'code-rejected':
      return { ok: false, reason: e.reason, event: e };
    default:
      return { ok: false, reason: 'refused' };
  }
}

/** What `login status` needs, from the login's own events. */
function trackState(state: LoginState, event: LoginEvent, save: () => void): void {
  switch (event.event) {
    case 'server-started':
      if (state.phase === 'starting') {
        state.server = recordProcess(event.pid);
        state.shimDirs = liveShimDirs();
        save();
      }
      break;
    case 'url':
      state.url = event.url;
      state.mode = event.mode ?? 'loopback';
      if (event.port !== undefined) state.port = event.port;
      if (event.tunnel !== undefined) state.tunnel = event.tunnel;
      if (event.method !== undefined) state.method = event.method;
      state.shimDirs = liveShimDirs();
      save();
      break;
    case 'waiting':
      if (state.phase === 'starting') {
        state.phase = 'waiting';
        state.deadline = Date.now() + event.remainingS * 1000;
        save();
      }
      break;
    case 'authenticated':
      state.phase = 'signed-in';
      state.method = event.method;
      save();
      break;
    case 'url-withdrawn':
      // `login status` must not offer a URL the server no longer serves.
      delete state.url;
      delete state.tunnel;
      delete state.port;
      save();
      break;
    case 'verified':
      if (event.account) {
        state.account = event.account;
        save();
      }
      break;
    default:
      break;
  }
}

// --- the socket: clients and the supervisor talk over a unix socket in the 0700 record
// dir: newline-delimited JSON, one request per connection. `attach` keeps
// the connection and streams the login's events; the others get one
// answer. Every client wait is bounded; lines are capped in length.

/** No request or answer is anywhere near this; a longer line is garbage. */
export const MAX_LINE = 64 * 1024;

export type Request = { op: 'attach' } | { op: 'finish'; line: string } | { op: 'cancel' } | { op: 'ping' };

/** What attach streams: the login's events (the client renders them for its terminal), then the end. */
export type Frame = { t: 'event'; event: LoginEvent } | { t: 'end'; outcome: Omit<Outcome, 'endedAt'> };

/** Split a socket into JSON lines; a line over MAX_LINE or not JSON ends the connection. */
export function onJsonLines(socket: net.Socket, handle: (value: unknown) => void): void {
  let pending = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    pending += chunk;
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        handle(JSON.parse(line));
      } catch {
        socket.destroy();
        return;
      }
      nl = pending.indexOf('\n');
    }
    if (pending.length > MAX_LINE) socket.destroy();
  });
}

export function sendLine(socket: net.Socket, value: unknown): void {
  if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(value)}\n`);
}

/** One request, one answer, within timeoutMs; undefined when nobody answers (no supervisor, or it died). */
export function request<T = Record<string, unknown>>(
  socketPath: string,
  req: Request,
  timeoutMs: number,
): Promise<T | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: socketPath });
    let done = false;
    const finish = (value: T | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.once('connect', () => sendLine(socket, req));
    socket.once('error', () => finish(undefined));
    socket.once('close', () => finish(undefined));
    onJsonLines(socket, (value) => finish(value as T));
  });
}

export interface Attachment {
  /** Resolves with the end frame's outcome, or undefined when the connection broke without one. */
  ended: Promise<Omit<Outcome, 'endedAt'> | undefined>;
  close(): void;
}

/** Stream the login's events from its start; the connection itself has no deadline (the login's own deadline ends it). */
export function attach(
  socketPath: string,
  onFrame: (frame: Frame) => void,
  connectTimeoutMs: number,
): Promise<Attachment | undefined> {
  return new Promise((resolveAttach) => {
    const socket = net.connect({ path: socketPath });
    let resolveEnd!: (outcome: Omit<Outcome, 'endedAt'> | undefined) => void;
    const ended = new Promise<Omit<Outcome, 'endedAt'> | undefined>((r) => (resolveEnd = r));
    const timer = setTimeout(() => {
      socket.destroy();
      resolveAttach(undefined);
    }, connectTimeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      sendLine(socket, { op: 'attach' });
      resolveAttach({ ended, close: () => socket.destroy() });
    });
    socket.once('error', () => {
      clearTimeout(timer);
      resolveAttach(undefined);
    });
    socket.once('close', () => resolveEnd(undefined));
    onJsonLines(socket, (value) => {
      const frame = value as Frame;
      if (frame.t === 'end') resolveEnd(frame.outcome);
      else onFrame(frame);
    });
  });
}
