/**
 * What a server replays when it loads a session: the reference says one
 * `user_message_chunk` and one `agent_message_chunk` (full text) per turn,
 * in order. Each such chunk is one message here; nothing is merged or
 * reordered, so the digest describes exactly what the server sent.
 *
 * The digest: counts per role, the roles in order (`u`/`a`), a sha256 over
 * the whole replay, and a short hash per message (to name the first message
 * that differs). Encoding, fixed because it is stored (replay.json):
 * each message contributes `<role> <byte length of text>\n<text>\n` to the
 * whole-replay sha256, and `sha256("<role>\n<text>")` cut to 16 hex digits
 * is its own hash. A non-text content block counts with its JSON as text.
 */
import crypto from 'node:crypto';
import type { Connection } from '../acp/connection.js';

export type Role = 'user' | 'agent';

export interface ReplayedMessage {
  role: Role;
  text: string;
}

export interface ReplayDigest {
  user: number;
  agent: number;
  /** Roles in order, one letter each: `u` user, `a` agent. */
  order: string;
  /** sha256 of the replayed text in order (encoding above). */
  sha256: string;
  /** Per message, the first 16 hex digits of its own sha256. */
  messages: string[];
}

const KINDS: Record<string, Role> = { user_message_chunk: 'user', agent_message_chunk: 'agent' };

function contentText(content: unknown): string {
  const c = content as { type?: unknown; text?: unknown } | null | undefined;
  if (c && c.type === 'text' && typeof c.text === 'string') return c.text;
  return JSON.stringify(content ?? null);
}

/** Calls `onMessage` for each replayed user/agent message of `sessionId` until stopped. */
export function onReplayedMessages(
  conn: Connection,
  sessionId: string,
  onMessage: (m: ReplayedMessage) => void,
): () => void {
  const stop = conn.onNotification((method, params) => {
    if (method !== 'session/update') return;
    const p = params as { sessionId?: unknown; update?: { sessionUpdate?: unknown; content?: unknown } } | undefined;
    if (p?.sessionId !== sessionId || typeof p.update?.sessionUpdate !== 'string') return;
    const role = KINDS[p.update.sessionUpdate];
    if (role) onMessage({ role, text: contentText(p.update.content) });
  });
  return () => void stop();
}

/** Builds a ReplayDigest message by message (memory: 16 hex digits per message, never the text). */
export class DigestBuilder {
  private readonly whole = crypto.createHash('sha256');
  private readonly digest: Omit<ReplayDigest, 'sha256'> = { user: 0, agent: 0, order: '', messages: [] };

  add(m: ReplayedMessage): void {
    const text = Buffer.from(m.text, 'utf8');
    this.whole.update(`${m.role} ${text.length}\n`).update(text).update('\n');
    this.digest[m.role] += 1;
    this.digest.order += m.role === 'user' ? 'u' : 'a';
    this.digest.messages.push(
      crypto.createHash('sha256').update(`${m.role}\n`).update(text).digest('hex').slice(0, 16),
    );
  }

  finish(): ReplayDigest {
    return { ...this.digest, sha256: this.whole.digest('hex') };
  }
}

/** The first message (0-based) at which two replays differ, or undefined when they are the same. */
export function firstDifference(a: ReplayDigest, b: ReplayDigest): number | undefined {
  const n = Math.min(a.messages.length, b.messages.length);
  for (let i = 0; i < n; i += 1) if (a.order[i] !== b.order[i] || a.messages[i] !== b.messages[i]) return i;
  if (a.messages.length !== b.messages.length || a.sha256 !== b.sha256) return n;
  return undefined;
}

const roleAt = (d: ReplayDigest, i: number): string =>
  d.order[i] === 'u' ? 'user' : d.order[i] === 'a' ? 'agent' : 'none';

/** One line saying how `replayed` differs from `recorded` (counts, or text from message N on; N counted from 1). */
export function describeDifference(replayed: ReplayDigest, recorded: ReplayDigest, at: number): string {
  const where =
    at < replayed.messages.length && at < recorded.messages.length
      ? `message ${at + 1} (${roleAt(replayed, at)}) differs from the recorded one`
      : at < recorded.messages.length
        ? `message ${at + 1} (${roleAt(recorded, at)}) and what follows were not replayed`
        : `message ${at + 1} (${roleAt(replayed, at)}) on were replayed but not recorded`;
  if (replayed.user !== recorded.user || replayed.agent !== recorded.agent)
    return `replayed ${replayed.user} user and ${replayed.agent} agent messages; the recorded replay has ${recorded.user} and ${recorded.agent}: ${where}`;
  return `the replayed text differs from the recorded replay from message ${at + 1} on: ${where}`;
}

/**
 * What can honestly be shown without a record: the session replayed at
 * least one user and one agent message, and the first one is the user's
 * (a turn starts with what was asked). undefined when it holds.
 */
export function unrecordedProblem(d: ReplayDigest): string | undefined {
  if (d.user === 0 || d.agent === 0)
    return `loaded, but replayed ${d.user} user and ${d.agent} agent messages; a proof needs at least one of each`;
  if (d.order[0] !== 'u') return 'loaded, but the replay starts with an agent message, not in turn order';
  return undefined;
}
