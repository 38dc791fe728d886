/**
 * URLs in the server's JSON-RPC messages. Everything the server sends that
 * is not the answer to one of our requests (notifications such as
 * `_vendor/auth_url`, agent requests with unknown methods, responses to ids
 * we never used) is scanned whole; answers to our own requests only in
 * their `_meta` fields and error data, where out-of-band hints live.
 */
import type { JsonRpcMessage } from '../../acp/framing.js';
import { urlsInText } from './text-source.js';

export interface MessageUrl {
  url: string;
  /** Which message and field, e.g. `notification _vendor/auth_url params.url`. */
  where: string;
}

export interface MessageInfo {
  solicited: boolean;
  method: string | undefined;
}

const MAX_DEPTH = 32;
/** A pathological message must not stall the capture. */
const MAX_STRINGS = 5_000;

interface Walk {
  out: MessageUrl[];
  label: string;
  metaOnly: boolean;
  budget: number;
}

/** Where a value sits in the message: its field path, whether under `_meta`, how deep. */
interface FieldAt {
  path: string;
  inMeta: boolean;
  depth: number;
}

function walk(value: unknown, at: FieldAt, w: Walk): void {
  const { path, inMeta, depth } = at;
  if (depth > MAX_DEPTH || w.budget <= 0) return;
  if (typeof value === 'string') {
    w.budget -= 1;
    if (!w.metaOnly || inMeta) for (const url of urlsInText(value)) w.out.push({ url, where: `${w.label} ${path}` });
    return;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walk(v, { path: `${path}[${i}]`, inMeta, depth: depth + 1 }, w);
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      walk(v, { path: path ? `${path}.${k}` : k, inMeta: inMeta || k === '_meta', depth: depth + 1 }, w);
  }
}

const top = (path: string, inMeta: boolean): FieldAt => ({ path, inMeta, depth: 0 });

function labelOf(msg: JsonRpcMessage, info: MessageInfo): string {
  if (typeof msg.method === 'string')
    return msg.id === undefined || msg.id === null ? `notification ${msg.method}` : `request ${msg.method}`;
  if (info.solicited) return `answer to ${info.method ?? 'a request'}`;
  return `response to id ${JSON.stringify(msg.id ?? null)} (not ours)`;
}

export function messageUrls(msg: JsonRpcMessage, info: MessageInfo): MessageUrl[] {
  const w: Walk = { out: [], label: labelOf(msg, info), metaOnly: info.solicited, budget: MAX_STRINGS };
  if (typeof msg.method === 'string') walk(msg.params, top('params', false), w);
  if ('result' in msg) walk(msg.result, top('result', false), w);
  if (msg.error && typeof msg.error === 'object') {
    // Error data is out of band even in an answer to our request.
    walk(msg.error.data, top('error.data', true), w);
    if (!info.solicited) walk(msg.error.message, top('error.message', false), w);
  }
  return w.out;
}
