/**
 * The restart check (server B): a fresh process must load server A's
 * session with no authenticate, replay its history, and accept the model
 * being re-applied (config does not persist across restarts on RC01).
 */
import type { Connection } from '../acp/connection.js';
import { withServer } from '../acp/lifecycle.js';
import { loadSession, setConfigOption } from '../acp/protocol.js';
import { type Finding, fail, pass, toResult } from './check-result.js';
import { failureOf } from './failure.js';
import { closeQuietly } from './live.js';
import { callOptions, type ProbeSessionState, type ServerCheckInput } from './server-context.js';
import type { CheckResult } from './types.js';
import { countUpdates } from './updates.js';

const TRACE_HINT = 'run with --trace FILE to see the exchange';

interface Replay {
  user: number;
  agent: number;
}

/** undefined: the answer was not a session (nor the null some builds send). */
async function load(conn: Connection, a: ProbeSessionState, input: ServerCheckInput): Promise<Replay | undefined> {
  const counter = countUpdates(conn, a.sessionId);
  try {
    const loaded: unknown = await loadSession(conn, a.sessionId, a.cwd, callOptions(input)());
    if (loaded !== null && (typeof loaded !== 'object' || Array.isArray(loaded))) return undefined;
    return { user: counter.count('user_message_chunk'), agent: counter.count('agent_message_chunk') };
  } finally {
    counter.stop();
  }
}

function replayFinding(a: ProbeSessionState, r: Replay): Finding | undefined {
  if (r.user >= a.turns && r.agent >= a.turns) return undefined;
  return fail(
    'server-error',
    `restart failed at replay: session/load replayed ${r.user} user and ${r.agent} agent chunks for ${a.turns} prompt turn(s)`,
    TRACE_HINT,
  );
}

async function reapplyModel(
  conn: Connection,
  a: ProbeSessionState,
  model: string,
  input: ServerCheckInput,
): Promise<Finding | undefined> {
  const result = await setConfigOption(
    conn,
    { sessionId: a.sessionId, configId: 'model', value: model },
    callOptions(input)(),
  );
  const now = result?.configOptions?.find((option) => option.id === 'model')?.currentValue;
  if (now === undefined || now === model) return undefined;
  return fail(
    'server-error',
    `restart failed at session/set_config_option: the model is ${String(now)} after setting ${model}`,
    TRACE_HINT,
  );
}

export async function runRestart(input: ServerCheckInput, a: ProbeSessionState): Promise<CheckResult> {
  const started = performance.now();
  const model = input.model ?? a.model;
  let step = 'start of server B and initialize';
  let finding: Finding;
  try {
    finding = await withServer(input.startOptions(input.budget.remainingMs()), async ({ server }) => {
      const conn = server.connection;
      step = 'session/load (no authenticate)';
      const replay = await load(conn, a, input);
      if (!replay)
        return fail('server-error', `restart failed at ${step}: the answer is not a session object`, TRACE_HINT);
      const badReplay = replayFinding(a, replay);
      if (badReplay) return badReplay;
      step = `session/set_config_option model=${model}`;
      const badModel = model ? await reapplyModel(conn, a, model, input) : undefined;
      if (badModel) return badModel;
      await closeQuietly(conn, a.sessionId, input);
      const history =
        a.turns > 0
          ? `replayed ${replay.user} user and ${replay.agent} agent chunks`
          : 'no history to replay (add --prompt to verify the replay)';
      return pass(
        `a fresh server loaded the session without authenticate; ${history}; ${model ? `model ${model} re-applied` : 'no model reported to re-apply'}`,
      );
    });
  } catch (err) {
    finding = failureOf(err, `restart failed at ${step}`, input);
    if (finding.failure === 'server-error' && step.startsWith('session/load'))
      finding.hint = `a fresh server could not load the session: check that ${input.stateDir}/conversations survives a server restart (same HOME, not a tmpfs)`;
  }
  return toResult('restart', finding, performance.now() - started);
}
