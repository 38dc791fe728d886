/**
 * Newline-delimited JSON-RPC framing, tolerant of servers that drift: ANSI
 * escape sequences on the channel, non-JSON lines (URLs, banners, garbage),
 * lines of several megabytes. Nothing here throws on bad input.
 */

// CSI (ESC [ ... final), OSC (ESC ] ... BEL | ESC \), and two-byte ESC sequences.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

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

export type ParsedLine = { kind: 'message'; message: JsonRpcMessage } | { kind: 'noise'; line: string } | { kind: 'empty' };

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
 * what it already holds, so a multi-megabyte line costs linear time.
 */
export class LineSplitter {
  private parts: Buffer[] = [];

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.parts.push(chunk.subarray(start, nl));
      lines.push(Buffer.concat(this.parts).toString('utf8'));
      this.parts = [];
      start = nl + 1;
    }
    if (start < chunk.length) this.parts.push(chunk.subarray(start));
    return lines;
  }

  /** The unterminated tail, at end of stream. */
  flush(): string | undefined {
    if (this.parts.length === 0) return undefined;
    const rest = Buffer.concat(this.parts).toString('utf8');
    this.parts = [];
    return rest;
  }
}

export function encodeMessage(message: JsonRpcMessage): string {
  return `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
}
