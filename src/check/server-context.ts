/** What the live, prompt and restart checks share: how to start a server, the budget, the probe cwd. */
import type { CallOptions } from '../acp/connection.js';
import type { StartOptions } from '../acp/lifecycle.js';
import type { Budget } from '../util/deadline.js';
import type { StepContext } from './failure.js';

export interface ServerCheckInput extends StepContext {
  /** Start options with the given initialize deadline. */
  startOptions: (initTimeoutMs: number) => StartOptions;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  budget: Budget;
  prompt: boolean;
  model: string | undefined;
}

/** Each call gets what is left of --timeout. */
export const callOptions = (input: ServerCheckInput) => (): CallOptions => ({
  timeoutMs: input.budget.remainingMs(),
  signal: input.signal,
});

/** The session server A created, as the restart check needs it. */
export interface ProbeSessionState {
  sessionId: string;
  cwd: string;
  model: string | undefined;
  /** Prompt turns the session holds, which B must replay. */
  turns: number;
}
