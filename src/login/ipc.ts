/**
 * Clients and the supervisor talk over a unix socket in the 0700 record
 * dir: newline-delimited JSON, one request per connection. `attach` keeps
 * the connection and streams the login's events; the others get one
 * answer. Every client wait is bounded; lines are capped in length.
 */
import net from 'node:net';
import type { LoginEvent } from './events.js';

/** No request or answer is anywhere near this; a longer line is garbage. */
export const MAX_LINE = 64 * 1024;

export type Request = { op: 'attach' } | { op: 'finish'; line: string } | { op: 'cancel' } | { op: 'ping' };

/** What attach streams: the login's events (the client renders them for its terminal), then the end. */
export type Frame =
  | { t: 'event'; event: LoginEvent }
  | {
      t: 'end';
      outcome: { exit: number; code?: string; message?: string; hint?: string; details?: Record<string, unknown> };
    };

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
  ended: Promise<Extract<Frame, { t: 'end' }>['outcome'] | undefined>;
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
    let resolveEnd!: (outcome: Extract<Frame, { t: 'end' }>['outcome'] | undefined) => void;
    const ended = new Promise<Extract<Frame, { t: 'end' }>['outcome'] | undefined>((r) => (resolveEnd = r));
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
