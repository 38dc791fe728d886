/** The optional round trip: one tiny prompt, expecting deltas and end_turn. Costs a model call. */
import type { CallOptions, Connection } from '../acp/connection.js';
import { type Finding, fail, pass } from './check-result.js';
import { countUpdates } from './updates.js';

export const PROBE_PROMPT = 'Reply with exactly: OK. Do not use any tools.';

export async function promptRoundTrip(conn: Connection, sessionId: string, call: () => CallOptions): Promise<Finding> {
  const counter = countUpdates(conn, sessionId);
  let result: { stopReason?: unknown } | null;
  try {
    result = await conn.request<{ stopReason?: unknown } | null>(
      'session/prompt',
      { sessionId, prompt: [{ type: 'text', text: PROBE_PROMPT }] },
      call(),
    );
  } finally {
    counter.stop();
  }
  const chunks = counter.count('agent_message_chunk');
  const stopReason = typeof result?.stopReason === 'string' ? result.stopReason : 'none';
  if (chunks > 0 && stopReason === 'end_turn')
    return pass(`session/prompt: ${chunks} delta chunk${chunks === 1 ? '' : 's'}, stopReason end_turn`);
  return fail(
    'server-error',
    `session/prompt ended with stopReason ${stopReason} after ${chunks} delta chunks (want end_turn and at least one chunk)`,
    'run with --trace FILE to see the exchange',
  );
}
