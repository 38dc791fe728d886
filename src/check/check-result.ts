/** Small constructors so each check reads as what it found. */
import type { CheckAccount, CheckResult, Severity, Status } from './types.js';

/** The fix for every "not logged in" finding. */
export const LOGIN_HINT = 'run: agyctl login';

export interface Finding {
  ok: boolean;
  message: string;
  hint?: string | undefined;
  failure?: Exclude<Status, 'ok'> | undefined;
  severity?: Severity;
  /** A stable error code, when the failure has one (see CheckResult.code). */
  code?: string | undefined;
  /** The signed-in account the finding names (see CheckResult.account). */
  account?: CheckAccount | undefined;
}

export const pass = (message: string, extra: Partial<Finding> = {}): Finding => ({ ok: true, message, ...extra });

export const fail = (failure: Exclude<Status, 'ok'>, message: string, hint?: string): Finding => ({
  ok: false,
  failure,
  message,
  hint,
});

export const warn = (message: string, hint?: string): Finding => ({ ok: false, severity: 'warning', message, hint });

export function toResult(id: string, finding: Finding, ms: number): CheckResult {
  const result: CheckResult = {
    id,
    ok: finding.ok,
    severity: finding.severity ?? 'error',
    result: finding.ok ? 'pass' : (finding.severity ?? 'error') === 'warning' ? 'warning' : 'fail',
    message: finding.message,
    ms: Math.round(ms),
  };
  if (finding.hint) result.hint = finding.hint;
  if (!finding.ok && finding.code) result.code = finding.code;
  if (!finding.ok && finding.failure && result.severity === 'error') result.failure = finding.failure;
  if (finding.account) result.account = finding.account;
  return result;
}

/** Run a synchronous check and time it. */
export function timed(id: string, fn: () => Finding): CheckResult {
  const started = performance.now();
  const finding = fn();
  return toResult(id, finding, performance.now() - started);
}
