/**
 * `agyctl check`: static checks, then (on request) the live, prompt and
 * restart checks against real server processes, all inside one --timeout
 * budget.
 */
import type { CommandIO } from '../core/io.js';
import { assertServerCanUse } from '../profiles/guard.js';
import { type ProfileId, profileOf, type ServerProfile } from '../profiles/index.js';
import { Budget } from '../util/deadline.js';
import { METRICS_FD_VAR, relayFd } from '../util/os/tree-owner.js';
import { runProfileStaticChecks } from './profile-checks.js';
import { runStaticChecks, type StaticInput, type StaticOutcome } from './static-checks.js';
import { applyLiveEvidence, overallStatus } from './status.js';
import type { CheckOptions, CheckResult, Metrics, Status, TokenInsight } from './types.js';

export type { CheckOptions };

export interface CheckReport {
  status: Status;
  checks: CheckResult[];
  token: TokenInsight | undefined;
  metrics: Metrics;
  durationMs: number;
  at: number;
}

/** antigravity's checks know its settings editor, its token file and its conversation store. */
const STATIC_CHECKS: Readonly<Record<ProfileId, (input: StaticInput & { profile: ServerProfile }) => StaticOutcome>> = {
  antigravity: runStaticChecks,
  'gemini-cli': runProfileStaticChecks,
};

async function checksOf(io: CommandIO, options: CheckOptions): Promise<CheckReport> {
  const budget = new Budget(options.timeoutMs);
  const at = Date.now();
  const profile = profileOf(io.opts);
  if (options.live) assertServerCanUse(profile, io.opts.stateDir);
  const input = {
    stateDir: io.opts.stateDir,
    env: io.ctx.env,
    cwd: io.ctx.cwd,
    server: io.opts.server,
    now: at,
    profile,
    live: options.live,
  };
  const st = STATIC_CHECKS[profile.id](input);
  const checks = [...st.checks];
  const metrics = { ...st.metrics };
  if (options.live && st.serverCommand) {
    const { serverChecks } = await import('./server-checks.js');
    const server = await serverChecks(io, options, budget);
    checks.push(...server.checks);
    if (server.serverStartS !== undefined) metrics.serverStartS = server.serverStartS;
  }
  const decided = options.live ? applyLiveEvidence(checks) : checks;
  if (options.live && decided.some((c) => c.id === 'live'))
    metrics.credentialsElsewhere = decided.some((c) => c.decidedBy === 'live');
  return {
    status: overallStatus(decided),
    checks: decided,
    token: st.token,
    metrics,
    durationMs: budget.elapsedMs(),
    at,
  };
}

/** The checks, then their metrics in the Prometheus textfile when asked for. */
export async function runCheck(io: CommandIO, options: CheckOptions): Promise<CheckReport> {
  const report = await checksOf(io, options);
  if (options.prometheus) {
    // Loaded only when asked for: the atomic writer pulls in node:crypto.
    const { writeMetricsFile } = await import('./check-metrics.js');
    // Run as the state dir's owner for root, root's side writes the file through the descriptor it passed.
    writeMetricsFile(options.prometheus, report, relayFd(io.ctx.env, METRICS_FD_VAR));
  }
  return report;
}
