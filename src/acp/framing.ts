/**
 * Newline-delimited JSON-RPC framing, tolerant of servers that drift: ANSI
 * escape sequences on the channel, non-JSON lines (URLs, banners, garbage),
 * lines of several megabytes. Nothing here throws on bad input.
 */

import { stripAnsi } from '../util/terminal-text.js';

export { stripAnsi };

/**
 * The longest line kept. A server writing a huge line without a newline
 * must not grow our memory without bound (a 200 MB line once took agyctl to
 * 669 MB RSS). Multi-megabyte JSON-RPC lines are legitimate (a big
 * initialize or session/update), so the bound is well above them.
 */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

export type JsonRpcId = number | string | null;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: JsonRpcId;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: JsonRpcError;
}

export type ParsedLine =
  | { kind: 'message'; message: JsonRpcMessage }
  | { kind: 'noise'; line: string }
  | { kind: 'empty' };

function looksLikeJsonRpc(value: unknown): value is JsonRpcMessage {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.method === 'string' || 'result' in v || 'error' in v;
}

/** One line from the server: a JSON-RPC message, or noise to keep for URL capture and --verbose. */
export function parseLine(rawLine: string): ParsedLine {
  const line = stripAnsi(rawLine).replace(/\r$/, '').trim();
  if (line.length === 0) return { kind: 'empty' };
  if (line.startsWith('{')) {
    try {
      const value: unknown = JSON.parse(line);
      if (looksLikeJsonRpc(value)) return { kind: 'message', message: value };
    } catch {
      /* not JSON after all */
    }
  }
  return { kind: 'noise', line };
}

/**
 * Splits a byte stream into lines without re-scanning or re-concatenating
 * what it already holds, so a multi-megabyte line costs linear time. A line
 * longer than maxBytes is dropped whole (onDrop says how long it was) and
 * the stream continues with the next line.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  /** Bytes of the overlong line being skipped, until its newline arrives. */
  private skipping: number | undefined;
  /** How many overlong lines were dropped. */
  dropped = 0;

  constructor(
    private readonly maxBytes = MAX_LINE_BYTES,
    private readonly onDrop: (bytes: number) => void = () => undefined,
  ) {}

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.skipping !== undefined || this.held + piece.length > this.maxBytes) {
        this.drop((this.skipping ?? this.held) + piece.length);
        continue;
      }
      this.parts.push(piece);
      lines.push(Buffer.concat(this.parts).toString('utf8'));
      this.parts = [];
      this.held = 0;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
    return lines;
  }

  /** The unterminated tail, at end of stream. */
  flush(): string | undefined {
    if (this.skipping !== undefined) this.drop(this.skipping);
    if (this.parts.length === 0) return undefined;
    const rest = Buffer.concat(this.parts).toString('utf8');
    this.parts = [];
    this.held = 0;
    return rest;
  }

  private hold(piece: Buffer): void {
    if (this.skipping !== undefined) {
      this.skipping += piece.length;
      return;
    }
    if (this.held + piece.length > this.maxBytes) {
      // Too long already: forget what we hold and skip to the next newline.
      this.skipping = this.held + piece.length;
      this.parts = [];
      this.held = 0;
      return;
    }
    // Copy: a subarray would pin the whole (possibly 64 KiB) chunk.
    this.parts.push(Buffer.from(piece));
    this.held += piece.length;
  }

  private drop(bytes: number): void {
    this.skipping = undefined;
    this.parts = [];
    this.held = 0;
    this.dropped += 1;
    this.onDrop(bytes);
  }
}

export function encodeMessage(message: JsonRpcMessage): string {
  return `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
}
