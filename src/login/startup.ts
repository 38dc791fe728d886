/**
 * Starting the server for a sign-in, and talking to its loopback listener.
 * gemini-cli signs in at START-UP,
 * before it answers initialize, when its settings already name
 * oauth-personal but it has no usable credentials (the re-login case).
 * Meanwhile it throws away what arrives on stdin (browser flow) or reads it
 * as the code (code-entry flow), so the initialize sent at spawn is lost.
 * Then the URL is the first thing we see; initialize is sent again once the
 * sign-in has visibly ended (the listener closed, or the token file was
 * written), and answered when the server reaches its ACP loop.
 *
 * The listener: a bare TCP connect-and-close is the only probe, since any
 * HTTP request without the real code would end the login. The only HTTP
 * agyctl ever sends is a user's pasted redirect.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { StartOptions } from '../acp/lifecycle.js';
import { type InitializeResult, initialize } from '../acp/protocol.js';
import { AcpServer, KILL_AFTER_LATE_MS } from '../acp/server.js';
import { AgyError, EXIT, TimeoutError } from '../core/errors.js';
import { withDeadline } from '../util/deadline.js';
import type { CapturedUrl, UrlCapture } from './capture/pipeline.js';

const RESEND_EVERY_MS = 1_000;
const RESEND_TIMEOUT_MS = 5_000;

export interface Ready {
  init: InitializeResult;
  initMs: number;
}

export type Started = ({ kind: 'ready' } & Ready) | { kind: 'signing-in'; url: CapturedUrl; ready: Promise<Ready> };

export interface StartupOptions {
  /** The whole sign-in's budget: a start-up sign-in holds initialize that long. */
  timeoutMs: number;
  /** The file a finished sign-in writes (code-entry: the only visible sign that stdin is free again). */
  tokenFile: string;
}

function checkInit(init: InitializeResult): InitializeResult {
  if (!init || typeof init !== 'object')
    throw new AgyError(
      EXIT.server,
      'protocol-error',
      'The server answered initialize with something that is not an object.',
    );
  return init;
}

export async function startForSignIn(
  start: StartOptions,
  capture: UrlCapture,
  budget: StartupOptions,
): Promise<{ server: AcpServer; started: Started }> {
  const server = AcpServer.start(start);
  const onAbort = (): void => server.kill();
  start.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const first = initialize(server.connection, start.clientVersion, {
      timeoutMs: budget.timeoutMs,
      signal: start.signal,
    }).then(checkInit);
    first.catch(() => undefined);
    const winner = await withDeadline(
      Promise.race([first.then((init) => ({ init })), capture.found.then((url) => ({ url }))]),
      {
        timeoutMs: start.initTimeoutMs,
        signal: start.signal,
        what: 'waiting for the server to answer initialize',
      },
    );
    if ('init' in winner)
      return { server, started: { kind: 'ready', init: winner.init, initMs: Date.now() - server.startedAt } };
    const ready = reinitialize({ server, start, first, url: winner.url, tokenFile: budget.tokenFile });
    ready.catch(() => undefined);
    return { server, started: { kind: 'signing-in', url: winner.url, ready } };
  } catch (err) {
    await server.stop({ graceMs: 0, killAfterMs: KILL_AFTER_LATE_MS });
    throw (err instanceof TimeoutError && server.connection.notAcpError()) || err;
  } finally {
    start.signal.removeEventListener('abort', onAbort);
  }
}

/** A server that signs in at start-up: how it was started, its first initialize (still unanswered) and the URL it showed. */
interface StartupSignIn {
  server: AcpServer;
  start: StartOptions;
  first: Promise<InitializeResult>;
  url: CapturedUrl;
  tokenFile: string;
}

function reinitialize(signIn: StartupSignIn): Promise<Ready> {
  const { server, start, first, url } = signIn;
  const since = Date.now();
  const stdinFree = async (): Promise<boolean> => {
    if (url.kind === 'loopback') return !(await listenerAlive(url.auth.port));
    try {
      return fs.statSync(signIn.tokenFile).mtimeMs >= since - 1_000;
    } catch {
      return false;
    }
  };
  return new Promise<Ready>((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      clearInterval(timer);
      fn();
    };
    const answered = (init: InitializeResult): void =>
      finish(() => resolve({ init, initMs: Date.now() - server.startedAt }));
    // Only a dead server ends this early; the deadline is the caller's.
    const failed = (err: unknown): void => {
      if (err instanceof AgyError && err.exit !== EXIT.timeout) finish(() => reject(err));
    };
    first.then(answered, failed);
    const timer = setInterval(() => {
      void stdinFree().then((free) => {
        if (!free || done) return;
        initialize(server.connection, start.clientVersion, { timeoutMs: RESEND_TIMEOUT_MS, signal: start.signal })
          .then(checkInit)
          .then(answered, failed);
      });
    }, RESEND_EVERY_MS);
  });
}

export function listenerAlive(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const finish = (alive: boolean): void => {
      socket.destroy();
      resolve(alive);
    };
    socket.setTimeout(timeoutMs, () => finish(true)); // slow, not gone
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** Deliver a validated redirect once: GET, no redirects followed, bounded, body discarded. */
export function deliverRedirect(url: URL, timeoutMs = 15_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy(new Error(`no answer from the login listener within ${timeoutMs / 1000}s`)));
    req.once('error', (err) => reject(err));
  });
}
