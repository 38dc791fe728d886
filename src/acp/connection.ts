/**
 * Our own small JSON-RPC 2.0 peer over a pair of streams. Unlike the ACP SDK
 * it never drops a message it does not understand: unknown notifications go
 * to subscribers, responses with unknown ids are traced and ignored, and
 * agent-to-client requests are always answered.
 */
import type { Readable, Writable } from 'node:stream';
import { AgyError, EXIT, InterruptedError, TimeoutError } from '../core/errors.js';
import { nullTracer, type Tracer } from '../core/io.js';
import { formatDuration } from '../util/duration.js';
import { AcpError } from './acp-error.js';
import { encodeMessage, type JsonRpcId, type JsonRpcMessage, LineSplitter, parseLine } from './framing.js';
import { serverText, serverValue } from './redact.js';

export type NotificationHandler = (method: string, params: unknown) => void;
/** A non-JSON stdout line: escape sequences stripped, and the raw bytes as text (OSC 8 hyperlinks live in the escapes). */
export type NoiseHandler = (line: string, raw: string) => void;
/**
 * Every message the server sends, before dispatch. `solicited` is true only
 * for the answer to one of our own pending requests (then `method` names it);
 * notifications, agent requests and responses to ids we never used are not.
 */
export type ServerMessageHandler = (
  message: JsonRpcMessage,
  info: { solicited: boolean; method: string | undefined },
) => void;
/** Answers an agent-to-client request (`id` is the agent's, e.g. for a later `$/cancel_request`); throw an AcpError-shaped object to answer with an error. */
export type RequestHandler = (method: string, params: unknown, id: JsonRpcId) => unknown;
/** How an agent-to-client request was answered, in words (for --verbose). */
export type RequestAnsweredListener = (method: string, how: string) => void;

/** A handler's result with a note saying why it was answered so (shown with --verbose). */
export class Answered {
  constructor(
    readonly result: unknown,
    readonly note: string,
  ) {}
}

/** The one elicitation mode agyctl advertises (initializeParams). */
export const ELICITATION_MODES = ['url'] as const;

/** A mode agyctl did not advertise is -32602, as the ACP elicitation specification requires. */
export function unsupportedElicitationMode(mode: unknown): { code: number; message: string; data: unknown } {
  return {
    code: -32602,
    message: 'Invalid params: unsupported elicitation mode',
    data: { mode: typeof mode === 'string' ? mode : null, supported: ELICITATION_MODES },
  };
}

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

interface PendingCall {
  method: string;
  sentAt: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout | undefined;
  cleanup: () => void;
}

export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** RC01 asks before running tools; nobody is at the keyboard, so we decline once unless told otherwise. */
export function defaultRequestHandler(method: string, params: unknown): unknown {
  if (method === 'session/request_permission') {
    const options = (params as { options?: Array<{ optionId: string; kind?: string }> })?.options ?? [];
    const reject =
      options.find((option) => option.kind === 'reject_once') ??
      options.find((option) => option.kind?.startsWith('reject'));
    return reject
      ? { outcome: { outcome: 'selected', optionId: reject.optionId } }
      : { outcome: { outcome: 'cancelled' } };
  }
  if (method === 'elicitation/create') {
    const mode = (params as { mode?: unknown } | null)?.mode;
    if (mode !== 'url') throw unsupportedElicitationMode(mode);
    // Only a sign-in agyctl started may show a page (login and probe --sign-in install their own handler).
    return new Answered(
      { action: 'decline' },
      'declined: a URL elicitation outside a sign-in (agyctl opens no page it did not ask for)',
    );
  }
  throw { code: -32601, message: 'Method not found', data: { method } };
}

export class Connection {
  private nextId = 1;
  private readonly pending = new Map<JsonRpcId, PendingCall>();
  private readonly notificationHandlers = new Set<NotificationHandler>();
  private readonly noiseHandlers = new Set<NoiseHandler>();
  private readonly messageHandlers = new Set<ServerMessageHandler>();
  private requestHandler: RequestHandler = defaultRequestHandler;
  private failure: Error | undefined;
  private callListener: ((method: string, ms: number, ok: boolean) => void) | undefined;
  private answeredListener: RequestAnsweredListener | undefined;
  private readonly splitter: LineSplitter;
  private readonly endHandlers = new Set<() => void>();
  /** For telling "not an ACP server" from "slow": non-JSON stdout lines before any JSON-RPC message. */
  private sawMessage = false;
  private noiseLines = 0;
  private firstNoise: string | undefined;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly tracer: Tracer = nullTracer,
    /** An overlong stdout line was dropped (see MAX_LINE_BYTES). */
    onDrop: (bytes: number) => void = () => undefined,
  ) {
    this.splitter = new LineSplitter(undefined, (bytes) => {
      this.tracer.record('event', { droppedLineBytes: bytes });
      onDrop(bytes);
    });
    input.on('data', (chunk: Buffer) => {
      for (const line of this.splitter.push(chunk)) this.handleLine(line);
    });
    input.on('end', () => {
      const rest = this.splitter.flush();
      if (rest !== undefined) this.handleLine(rest);
      for (const h of this.endHandlers) h();
    });
    output.on('error', () => {
      /* EPIPE when the server died: the exit handler reports it */
    });
  }

  onNotification(handler: NotificationHandler): () => void {
    this.notificationHandlers.add(handler);
    return () => this.notificationHandlers.delete(handler);
  }

  onNoise(handler: NoiseHandler): () => void {
    this.noiseHandlers.add(handler);
    return () => this.noiseHandlers.delete(handler);
  }

  /** The server closed its stdout (usually because it is exiting). */
  onEnd(handler: () => void): void {
    this.endHandlers.add(handler);
  }

  /** When the server wrote only non-JSON lines on stdout: the error that says so (it is not an ACP server, or it is broken). */
  notAcpError(): AgyError | undefined {
    if (this.sawMessage || this.noiseLines === 0) return undefined;
    return new AgyError(
      EXIT.server,
      'protocol-error',
      `The server printed ${this.noiseLines} line${this.noiseLines > 1 ? 's' : ''} on stdout that ${this.noiseLines > 1 ? 'are' : 'is'} not JSON-RPC and never answered (first: "${this.firstNoise}"): it does not look like an ACP server.`,
      {
        hint: 'check that --server (or AGYCTL_SERVER) runs agy_acp_server; run with --verbose to see its output',
      },
    );
  }

  /** Every message from the server (URL capture scans the unsolicited ones); a throwing listener never breaks the connection. */
  onServerMessage(handler: ServerMessageHandler): () => void {
    this.messageHandlers.add(handler);
    return () => this.messageHandlers.delete(handler);
  }

  /** Each call of ours, once settled: its method, how long it took and whether it succeeded (for --verbose). */
  onCallSettled(listener: (method: string, ms: number, ok: boolean) => void): void {
    this.callListener = listener;
  }

  /** Each agent-to-client request once answered: its method and the answer in words (for --verbose). */
  onRequestAnswered(listener: RequestAnsweredListener): void {
    this.answeredListener = listener;
  }

  setRequestHandler(handler: RequestHandler): void {
    this.requestHandler = handler;
  }

  /** The method of our own request with this id while it is still pending (an elicitation names the request it belongs to). */
  pendingMethod(id: unknown): string | undefined {
    return typeof id === 'number' || typeof id === 'string' ? this.pending.get(id)?.method : undefined;
  }

  request<T = unknown>(method: string, params: unknown, options: CallOptions = {}): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    if (options.signal?.aborted) return Promise.reject(new InterruptedError());
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => this.settle(id, new InterruptedError());
      const entry: PendingCall = {
        method,
        sentAt: Date.now(),
        resolve: resolve as (v: unknown) => void,
        reject,
        timer: setTimeout(
          () =>
            this.settle(
              id,
              new TimeoutError(`The server did not answer ${method} within ${formatDuration(timeoutMs)}.`),
            ),
          timeoutMs,
        ),
        cleanup: () => options.signal?.removeEventListener('abort', onAbort),
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, entry);
      this.send({ id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.failure) this.send({ method, params });
  }

  /** Write raw bytes to the server's stdin (gemini-cli's code-entry flow reads a pasted code there). */
  writeRaw(text: string): void {
    this.output.write(text);
  }

  /** The transport is gone (server exited, protocol broken): every pending and future call rejects with err. */
  fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const id of [...this.pending.keys()]) this.settle(id, err);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** The ids of our requests still pending whose method passes `which` (to name them in a cancellation). */
  pendingIds(which: (method: string) => boolean): JsonRpcId[] {
    return [...this.pending].filter(([, entry]) => which(entry.method)).map(([id]) => id);
  }

  private send(message: JsonRpcMessage): void {
    this.tracer.record('send', { jsonrpc: '2.0', ...message });
    this.output.write(encodeMessage(message));
  }

  private settle(id: JsonRpcId, err: unknown, value?: unknown): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    entry.cleanup();
    this.callListener?.(entry.method, Date.now() - entry.sentAt, !err);
    if (err) entry.reject(err);
    else entry.resolve(value);
  }

  private handleLine(line: string): void {
    const parsed = parseLine(line);
    if (parsed.kind === 'empty') return;
    if (parsed.kind === 'noise') {
      // Handlers get the raw line (URL capture needs the sign-in URL's state); they show it only through serverText().
      const shown = serverText(parsed.line, { singleLine: true });
      this.tracer.record('stdout-noise', shown);
      this.noiseLines += 1;
      this.firstNoise ??= shown.length > 120 ? `${shown.slice(0, 119)}…` : shown;
      for (const h of this.noiseHandlers) h(parsed.line, line);
      return;
    }
    const msg = parsed.message;
    this.sawMessage = true;
    this.tracer.record('recv', msg);
    this.tellListeners(msg);
    if (typeof msg.method === 'string' && msg.id !== undefined && msg.id !== null)
      void this.answerRequest(msg.id, msg.method, msg.params);
    else if (typeof msg.method === 'string') for (const h of this.notificationHandlers) h(msg.method, msg.params);
    else if (msg.id !== undefined && msg.id !== null && this.pending.has(msg.id)) this.settleResponse(msg);
    // A response with an unknown id is traced above and otherwise ignored.
  }

  private tellListeners(msg: JsonRpcMessage): void {
    if (this.messageHandlers.size === 0) return;
    const isResponse = typeof msg.method !== 'string';
    const entry = isResponse && msg.id !== undefined && msg.id !== null ? this.pending.get(msg.id) : undefined;
    const info = { solicited: entry !== undefined, method: entry?.method ?? (isResponse ? undefined : msg.method) };
    for (const h of this.messageHandlers) {
      try {
        h(msg, info);
      } catch {
        /* a listener's bug must not take the protocol down */
      }
    }
  }

  private settleResponse(msg: JsonRpcMessage): void {
    const entry = this.pending.get(msg.id as JsonRpcId)!;
    // The error's words end up in messages, --json and hints: redacted here, once, for all of them.
    if (msg.error && typeof msg.error === 'object')
      this.settle(
        msg.id as JsonRpcId,
        new AcpError(entry.method, {
          code: Number(msg.error.code),
          message: serverText(String(msg.error.message ?? 'error')),
          data: serverValue(msg.error.data),
        }),
      );
    else this.settle(msg.id as JsonRpcId, undefined, msg.result);
  }

  private async answerRequest(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    const shownMethod = serverText(method, { singleLine: true });
    try {
      const out = await this.requestHandler(method, params, id);
      const result = out instanceof Answered ? out.result : out;
      if (!this.failure) this.send({ id, result: result ?? null });
      this.answeredListener?.(shownMethod, out instanceof Answered ? out.note : 'answered');
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown; data?: unknown };
      const error = {
        code: typeof e.code === 'number' ? e.code : -32603,
        message: typeof e.message === 'string' ? e.message : 'Internal error',
        ...(e.data === undefined ? {} : { data: e.data }),
      };
      if (!this.failure) this.send({ id, error });
      this.answeredListener?.(shownMethod, `answered error ${error.code} (${error.message})`);
    }
  }
}
