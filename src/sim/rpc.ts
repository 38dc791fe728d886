// Newline-delimited JSON-RPC 2.0 over stdio: framing, dispatch, and the
// writer. stdout is the protocol channel; nothing else may write to it except
// the deliberate quirks (AGY_SIM_NOISE, AGY_SIM_LAUNCH=stdout), which go
// through writeRawLine so every stdout write is in this file.
import type { NoiseMode } from './config.js';
import { methodNotFound, RpcError } from './errors.js';

export type Id = string | number | null;
export type Params = Record<string, unknown>;
/** A request's params, and its id (an elicitation names the request it belongs to). */
export type RequestHandler = (params: Params, id: Id) => unknown;

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

/** Garbage lines of AGY_SIM_NOISE=garbage|both, written around each response. */
export const GARBAGE_BEFORE = 'sim-noise: this line is not JSON';
export const GARBAGE_AFTER = '{"jsonrpc":"2.0","truncated';
/** gemini-cli's code-entry screen: alt-screen on, clear, then the response on a line starting with ESC[?1049l. */
export const ANSI_BEFORE = ['\x1b[?1049h', '\x1b[2J\x1b[H'];
export const ANSI_RESPONSE_PREFIX = '\x1b[?1049l';

/**
 * A handler result whose follow-up notifications must go out right AFTER the
 * response (session/new's available_commands_update), never before it and
 * never after the answer to a later request.
 */
export class WithFollowUp {
  constructor(
    readonly result: unknown,
    readonly followUp: () => void,
  ) {}
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is Id {
  return typeof v === 'string' || typeof v === 'number' || v === null;
}

export class RpcConnection {
  private readonly handlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, (params: Params) => void>();
  private readonly pending = new Map<number, Pending>();
  private nextOutgoingId = 0;
  /** Lines received before the cold start finished, served in order afterwards. */
  private backlog: string[] | undefined = [];

  constructor(
    private readonly noise: NoiseMode,
    private readonly write: (chunk: string) => void,
  ) {}

  on(method: string, handler: RequestHandler): void {
    this.handlers.set(method, handler);
  }

  off(method: string): void {
    this.handlers.delete(method);
  }

  handlerFor(method: string): RequestHandler | undefined {
    return this.handlers.get(method);
  }

  onNotification(method: string, handler: (params: Params) => void): void {
    this.notificationHandlers.set(method, handler);
  }

  /** Called once the simulated cold start is over. */
  ready(): void {
    const lines = this.backlog ?? [];
    this.backlog = undefined;
    for (const line of lines) this.handleLine(line);
  }

  writeRawLine(line: string): void {
    this.write(`${line}\n`);
  }

  notify(method: string, params: unknown): void {
    this.writeRawLine(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  /** Agent-to-client request (e.g. session/request_permission); resolves with the client's result. `onSent` learns its id. */
  request(method: string, params: unknown, onSent?: (id: number) => void): Promise<unknown> {
    const id = this.nextOutgoingId++;
    onSent?.(id);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.writeRawLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  private sendResponse(message: Record<string, unknown>): void {
    const line = JSON.stringify(message);
    const garbage = this.noise === 'garbage' || this.noise === 'both';
    const ansi = this.noise === 'ansi' || this.noise === 'both';
    if (garbage) this.writeRawLine(GARBAGE_BEFORE);
    if (ansi) for (const l of ANSI_BEFORE) this.writeRawLine(l);
    this.writeRawLine(ansi ? ANSI_RESPONSE_PREFIX + line : line);
    if (garbage) this.writeRawLine(GARBAGE_AFTER);
  }

  private respondError(id: Id, error: RpcError): void {
    this.sendResponse({ jsonrpc: '2.0', id, error: error.toJSON() });
  }

  handleLine(rawLine: string): void {
    if (this.backlog) {
      this.backlog.push(rawLine);
      return;
    }
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '') return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.respondError(null, new RpcError(-32700, 'Parse error'));
      return;
    }
    if (!isObject(msg)) {
      this.respondError(null, new RpcError(-32600, 'Invalid Request'));
      return;
    }
    if (typeof msg.method === 'string') {
      const params = isObject(msg.params) ? msg.params : {};
      if (!('id' in msg)) {
        // Notification: never answered, unknown ones ignored (JSON-RPC 2.0).
        this.notificationHandlers.get(msg.method)?.(params);
        return;
      }
      const id = isId(msg.id) ? msg.id : null;
      void this.dispatch(id, msg.method, params);
      return;
    }
    if ('id' in msg && ('result' in msg || 'error' in msg)) {
      this.settleOutgoing(msg);
      return;
    }
    this.respondError(isId(msg.id) ? msg.id : null, new RpcError(-32600, 'Invalid Request'));
  }

  private async dispatch(id: Id, method: string, params: Params): Promise<void> {
    const handler = this.handlers.get(method);
    if (!handler) {
      this.respondError(id, methodNotFound(method));
      return;
    }
    try {
      // Synchronous handlers answer before the next line is read, so replies
      // to quick requests stay in request order.
      const out = handler(params, id);
      const result: unknown = out instanceof Promise ? await out : out;
      if (result instanceof WithFollowUp) {
        this.sendResponse({ jsonrpc: '2.0', id, result: result.result });
        result.followUp();
      } else {
        this.sendResponse({ jsonrpc: '2.0', id, result });
      }
    } catch (err) {
      if (err instanceof RpcError) this.respondError(id, err);
      else
        this.respondError(
          id,
          new RpcError(-32603, 'Internal error', { message: String((err as Error)?.message ?? err) }),
        );
    }
  }

  private settleOutgoing(msg: Record<string, unknown>): void {
    const id = typeof msg.id === 'number' ? msg.id : Number(msg.id);
    const p = this.pending.get(id);
    if (!p) return; // an answer to nothing we asked: ignore
    this.pending.delete(id);
    if ('error' in msg) p.reject(msg.error);
    else p.resolve(msg.result);
  }
}

/** Splits a byte stream into lines; a final unterminated line is still delivered at EOF. */
export class LineSplitter {
  // Pieces of the current unterminated line; kept as a list so a multi-MB
  // line arriving in many chunks is not rescanned on every chunk.
  private parts: string[] = [];

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf('\n', start);
    while (nl >= 0) {
      this.parts.push(chunk.slice(start, nl));
      const line = this.parts.join('');
      this.parts = [];
      start = nl + 1;
      this.onLine(line);
      nl = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) this.parts.push(chunk.slice(start));
  }

  end(): void {
    const rest = this.parts.join('');
    this.parts = [];
    if (rest !== '') this.onLine(rest);
  }
}
