/** Counting a session's `session/update` kinds while a call runs (replayed history, prompt deltas). */
import type { Connection } from '../acp/connection.js';

export interface UpdateCounter {
  count(kind: string): number;
  stop(): void;
}

export function countUpdates(conn: Connection, sessionId: string): UpdateCounter {
  const counts = new Map<string, number>();
  const stop = conn.onNotification((method, params) => {
    if (method !== 'session/update') return;
    const p = params as { sessionId?: unknown; update?: { sessionUpdate?: unknown } } | undefined;
    if (p?.sessionId !== sessionId || typeof p.update?.sessionUpdate !== 'string') return;
    counts.set(p.update.sessionUpdate, (counts.get(p.update.sessionUpdate) ?? 0) + 1);
  });
  return { count: (kind) => counts.get(kind) ?? 0, stop: () => void stop() };
}
