/**
 * The live check (server A): start, initialize, session/new in an empty
 * temporary directory WITHOUT authenticate, optionally the prompt round
 * trip and the --model switch, session/close, stop. The session is kept
 * (not yet deleted) so the restart check can load it on a fresh server.
 */

import { AcpError } from '../acp/acp-error.js';
import type { Connection } from '../acp/connection.js';
import { type RunningServer, withServer } from '../acp/lifecycle.js';
import {
  type AuthStatus,
  authStatus,
  closeSession,
  currentModel,
  describeInit,
  type NewSessionResult,
  newSession,
  setConfigOption,
  supportsAuthStatus,
} from '../acp/protocol.js';
import { usageError } from '../core/errors.js';
import { type Finding, fail, LOGIN_HINT, pass, toResult, warn } from './check-result.js';
import { failureOf } from './failure.js';
import { promptRoundTrip } from './prompt.js';
import { callOptions, type ProbeSessionState, type ServerCheckInput } from './server-context.js';
import type { CheckResult } from './types.js';

export interface LiveOutcome {
  checks: CheckResult[];
  session: ProbeSessionState | undefined;
  /** Spawn to initialize answer, when the server got that far. */
  serverStartS: number | undefined;
  liveOk: boolean;
}

export function offeredModels(s: NewSessionResult): string[] {
  const fromModels = s.models?.availableModels?.map((m) => m.modelId) ?? [];
  const option = (s.configOptions as Array<{ id: string; options?: Array<{ value?: unknown }> }> | undefined)?.find(
    (option) => option.id === 'model',
  );
  const fromOption =
    option?.options?.map((choice) => choice.value).filter((v): v is string => typeof v === 'string') ?? [];
  return fromModels.length > 0 ? fromModels : fromOption;
}

/** session/close is best effort: older builds lack it, and the session is proven either way. */
export async function closeQuietly(conn: Connection, sessionId: string, input: ServerCheckInput): Promise<void> {
  try {
    await closeSession(conn, sessionId, callOptions(input)());
  } catch {
    /* see above */
  }
}

function describeServer(running: RunningServer): string {
  const { agent } = describeInit(running.init);
  return `${agent.name ?? 'server'}${agent.version ? ` ${agent.version}` : ''}`;
}

/** `track` learns the session id at once, so it is cleaned up even when a step throws past us (Ctrl-C, bad --model). */
export async function runLive(
  input: ServerCheckInput,
  cwd: string,
  track: (sessionId: string) => void,
): Promise<LiveOutcome> {
  const call = callOptions(input);
  const out: LiveOutcome = { checks: [], session: undefined, serverStartS: undefined, liveOk: false };
  const started = performance.now();
  let step = 'start and initialize';
  let promptResult: CheckResult | undefined;
  let live: Finding;
  try {
    live = await withServer(input.startOptions(input.budget.remainingMs()), async (running) => {
      out.serverStartS = running.initMs / 1000;
      const conn = running.server.connection;
      if (supportsAuthStatus(running.init)) {
        step = 'auth/status';
        const asked = performance.now();
        const status = await askAuthStatus(conn, call());
        out.checks.push(toResult('auth-status', statusFinding(status), performance.now() - asked));
        if (status?.state === 'unauthenticated')
          return fail(
            'not-authenticated',
            'the server says it is not signed in (auth/status: unauthenticated), whatever the token file holds',
            LOGIN_HINT,
          );
      }
      step = 'session/new (no authenticate)';
      const s = await newSession(conn, cwd, call());
      track(s.sessionId);
      const session: ProbeSessionState = { sessionId: s.sessionId, cwd, model: currentModel(s), turns: 0 };
      out.session = session;
      if (input.model) {
        const offered = offeredModels(s);
        if (offered.length > 0 && !offered.includes(input.model))
          throw usageError(
            `--model ${input.model} is not offered by this server.`,
            `choose one of: ${offered.join(', ')}`,
          );
        step = `session/set_config_option model=${input.model}`;
        await setConfigOption(conn, { sessionId: s.sessionId, configId: 'model', value: input.model }, call());
        session.model = input.model;
      }
      if (input.prompt) {
        promptResult = await timedPrompt(conn, session, input);
        if (promptResult.ok) session.turns = 1;
      }
      await closeQuietly(conn, s.sessionId, input);
      return pass(
        `${describeServer(running)} answered initialize in ${running.initMs}ms; session/new without authenticate gave a session${session.model ? ` (model ${session.model})` : ''}`,
      );
    });
    out.liveOk = true;
  } catch (err) {
    live = failureOf(err, `live check failed at ${step}`, input);
  }
  const promptMs = promptResult?.ms ?? 0;
  out.checks.push(toResult('live', live, performance.now() - started - promptMs));
  if (promptResult) out.checks.push(promptResult);
  return out;
}

async function timedPrompt(
  conn: Connection,
  session: ProbeSessionState,
  input: ServerCheckInput,
): Promise<CheckResult> {
  const started = performance.now();
  let finding: Finding;
  try {
    finding = await promptRoundTrip(conn, session.sessionId, callOptions(input));
  } catch (err) {
    finding = failureOf(err, 'prompt failed at session/prompt', input);
  }
  return toResult('prompt', finding, performance.now() - started);
}

/** auth/status is a question without side effects; an error answer is no verdict (session/new still decides). */
async function askAuthStatus(
  conn: Connection,
  call: ReturnType<ReturnType<typeof callOptions>>,
): Promise<AuthStatus | undefined> {
  try {
    return await authStatus(conn, call);
  } catch (err) {
    if (err instanceof AcpError) return undefined;
    throw err;
  }
}

const accountWords = (s: AuthStatus): string =>
  s.account ? ` as ${s.account.label}${s.account.email ? ` <${s.account.email}>` : ''}` : '';

/** The server's own word on its sign-in: unknown (or no answer) is a note; unauthenticated fails the live check. */
function statusFinding(s: AuthStatus | undefined): Finding {
  if (!s) return warn('auth/status gave no answer: the session check decides');
  if (s.state === 'unauthenticated')
    return fail('not-authenticated', 'auth/status: unauthenticated (the server needs a sign-in)', LOGIN_HINT);
  if (s.state === 'unknown')
    return warn('auth/status: unknown (the server cannot tell yet; the session check decides)');
  const account = s.account
    ? { account: { label: s.account.label, email: s.account.email ?? null, source: 'server' as const } }
    : {};
  return pass(
    `auth/status: ${s.state === 'not_required' ? 'no sign-in needed' : `signed in${accountWords(s)}`}`,
    account,
  );
}
