// Proofs area (servers a backup proof must judge correctly): a replay that differs from the database,
// and a server that rewrites its credential files in place.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProofSwitches } from './config.js';
import type { StatePaths } from './paths.js';
import type { Turn } from './store.js';

/** The history as this server replays it: AGY_SIM_REPLAY_DROP_LAST leaves out the last message, AGY_SIM_REPLAY_ALTER=N changes message N's text. */
export function replayedHistory(switches: ProofSwitches, turns: Turn[]): Turn[] {
  let out = turns.map((t) => ({ ...t }));
  if (switches.replayAlter !== undefined) {
    let n = 0;
    for (const turn of out) {
      if (n === switches.replayAlter) turn.user = `${turn.user} (altered)`;
      n += 1;
      if (turn.agent === undefined) continue;
      if (n === switches.replayAlter) turn.agent = `${turn.agent} (altered)`;
      n += 1;
    }
  }
  if (switches.replayDropLast && out.length > 0) {
    const last = out[out.length - 1]!;
    if (last.agent !== undefined) out[out.length - 1] = { user: last.user, agent: undefined };
    else out = out.slice(0, -1);
  }
  return out;
}

/**
 * AGY_SIM_REWRITE_CREDENTIALS: settings.json and acp_token.json rewritten
 * in place (writeFileSync: O_TRUNC, following a link), as a server that
 * refreshes its token without an atomic rename would. `own` writes the
 * sim's own state dir; an absolute path writes that state dir (a server
 * that ignores HOME).
 */
export function rewriteCredentials(switches: ProofSwitches, paths: StatePaths): void {
  const where = switches.rewriteCredentials;
  if (where === undefined) return;
  const dir = where === 'own' ? paths.stateDir : where;
  const token = where === 'own' ? paths.token : join(dir, 'acp_token.json');
  const settings = where === 'own' ? paths.settings : join(dir, 'settings.json');
  writeFileSync(
    token,
    JSON.stringify({
      access_token: 'ya29.rewritten-by-sim',
      refresh_token: '1//rewritten',
      token_type: 'Bearer',
      expiry_date: 2,
    }),
  );
  writeFileSync(settings, `${JSON.stringify({ auth: { type: 'oauth-personal' }, rewrittenBySim: true })}\n`);
}
