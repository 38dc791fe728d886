/**
 * From check results to one status and one exit code. Auth problems win
 * (they are what a person must act on first), then a timeout or a server
 * failure (which hide what the server would have said), then static
 * findings. Warnings never change the outcome.
 */
import { EXIT, type ExitCode } from '../core/errors.js';
import type { CheckResult, Status } from './types.js';

export const STATUSES: readonly Status[] = [
  'ok',
  'not-authenticated',
  'reauth-required',
  'misconfigured',
  'server-error',
  'timeout',
];

const PRECEDENCE: ReadonlyArray<Exclude<Status, 'ok'>> = [
  'reauth-required',
  'not-authenticated',
  'timeout',
  'server-error',
  'misconfigured',
];

export const EXIT_FOR: Record<Status, ExitCode> = {
  ok: EXIT.ok,
  'not-authenticated': EXIT.auth,
  'reauth-required': EXIT.auth,
  'server-error': EXIT.server,
  timeout: EXIT.timeout,
  misconfigured: EXIT.findings,
};

export function overallStatus(checks: readonly CheckResult[]): Status {
  const failures = new Set(
    checks.filter((c) => !c.ok && c.severity === 'error').map((c) => c.failure ?? 'server-error'),
  );
  return PRECEDENCE.find((s) => failures.has(s)) ?? 'ok';
}

/**
 * Live beats static: when the live check got a session without
 * authenticate, a finding that only says "the credentials are not in the
 * token file" is wrong about the server (it keeps them elsewhere, e.g. the
 * OS keyring). Such findings become notes: warnings that fail nothing.
 */
export function applyLiveEvidence(checks: readonly CheckResult[]): CheckResult[] {
  const live = checks.find((c) => c.id === 'live');
  if (!live?.ok) return [...checks];
  return checks.map((c): CheckResult => {
    if (c.ok || c.liveNote === undefined) return c;
    const { failure: _failure, hint: _hint, liveNote, ...rest } = c;
    return { ...rest, severity: 'warning', result: 'warning', message: liveNote, decidedBy: 'live' };
  });
}
