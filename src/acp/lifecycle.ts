/**
 * Start a server and bring it to an initialized connection, or fail with
 * the right exit code (4 server, 5 timeout, 130 Ctrl-C) and no process left.
 * `withServer` guarantees the stop on every path.
 */

import { AgyError, EXIT, TimeoutError } from '../core/errors.js';
import { type InitializeResult, initialize } from './protocol.js';
import { AcpServer, KILL_AFTER_LATE_MS, killAfterFor, type StartServerOptions } from './server.js';

export interface StartOptions extends StartServerOptions {
  signal: AbortSignal;
  /** Deadline for spawn -> initialize answer (RC01 cold start is 5-6 s). */
  initTimeoutMs: number;
  clientVersion: string;
  /** When the command's --timeout runs out (epoch ms): stopping the server must fit in it. */
  deadlineAt?: number;
}

/** After a failure (a passed deadline, a broken server) the stop is short: EOF, then TERM, then KILL, about a second in all. */
export const FAILED_STOP = { graceMs: KILL_AFTER_LATE_MS / 2, killAfterMs: KILL_AFTER_LATE_MS / 2 };

export interface RunningServer {
  server: AcpServer;
  init: InitializeResult;
  /** Spawn to initialize answer. */
  initMs: number;
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const server = AcpServer.start(options);
  const onAbort = (): void => server.kill();
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const init = await initialize(server.connection, options.clientVersion, {
      timeoutMs: options.initTimeoutMs,
      signal: options.signal,
    });
    if (!init || typeof init !== 'object')
      throw new AgyError(
        EXIT.server,
        'protocol-error',
        'The server answered initialize with something that is not an object.',
      );
    const initMs = Date.now() - server.startedAt;
    options.onNote?.(`the server answered initialize ${initMs} ms after it was started (pid ${server.pid})`);
    return { server, init, initMs };
  } catch (err) {
    await server.stop(FAILED_STOP);
    // A deadline passed while the server printed only non-JSON: say what it is, not "slow".
    throw (err instanceof TimeoutError && server.connection.notAcpError()) || err;
  } finally {
    options.signal.removeEventListener('abort', onAbort);
  }
}

export async function withServer<T>(options: StartOptions, fn: (running: RunningServer) => Promise<T>): Promise<T> {
  const running = await startServer(options);
  // Ctrl-C kills the group at once; stop() afterwards just reaps it.
  const onAbort = (): void => running.server.kill();
  options.signal.addEventListener('abort', onAbort, { once: true });
  let failed = true;
  try {
    const result = await fn(running);
    failed = false;
    return result;
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    await running.server.stop(failed ? FAILED_STOP : { killAfterMs: killAfterFor(options.deadlineAt) });
  }
}
