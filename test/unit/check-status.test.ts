import { describe, expect, it } from 'vitest';
import { AcpError } from '../../src/acp/acp-error.js';
import { failureOf } from '../../src/check/failure.js';
import { applyLiveEvidence, EXIT_FOR, overallStatus } from '../../src/check/status.js';
import type { CheckResult, Status } from '../../src/check/types.js';
import { AgyError, InterruptedError, TimeoutError } from '../../src/core/errors.js';

const check = (ok: boolean, failure?: Exclude<Status, 'ok'>, severity: 'error' | 'warning' = 'error'): CheckResult => ({
  id: 'x',
  ok,
  severity,
  message: 'm',
  ms: 0,
  ...(failure ? { failure } : {}),
});

describe('overallStatus', () => {
  it('is ok when everything passed, warnings included', () => {
    expect(overallStatus([check(true), check(false, undefined, 'warning')])).toBe('ok');
  });
  it('puts auth first, then timeout, server, static findings', () => {
    expect(overallStatus([check(false, 'misconfigured'), check(false, 'not-authenticated')])).toBe('not-authenticated');
    expect(overallStatus([check(false, 'not-authenticated'), check(false, 'reauth-required')])).toBe('reauth-required');
    expect(overallStatus([check(false, 'misconfigured'), check(false, 'timeout'), check(false, 'server-error')])).toBe(
      'timeout',
    );
    expect(overallStatus([check(false, 'misconfigured'), check(false, 'server-error')])).toBe('server-error');
    expect(overallStatus([check(false, 'misconfigured')])).toBe('misconfigured');
  });
  it('maps statuses onto the exit-code table', () => {
    expect(EXIT_FOR).toEqual({
      ok: 0,
      'not-authenticated': 3,
      'reauth-required': 3,
      'server-error': 4,
      timeout: 5,
      misconfigured: 6,
    });
  });
});

describe('failureOf', () => {
  const ctx = { timeoutLabel: '60s' };
  it('tells not logged in from a revoked credential', () => {
    const required = new AcpError('session/new', {
      code: -32000,
      message: 'Authentication required',
      data: { message: 'No authentication method selected.' },
    });
    const revoked = new AcpError('session/new', {
      code: -32000,
      message: 'Authentication failed',
      data: { message: 'Token refresh failed: invalid_grant' },
    });
    expect(failureOf(required, 'live', ctx)).toMatchObject({ failure: 'not-authenticated', hint: 'run: agyctl login' });
    expect(failureOf(revoked, 'live', ctx).failure).toBe('reauth-required');
    expect(
      failureOf(
        new AcpError('session/load', { code: -32000, message: 'Session not found' }),
        'restart failed at session/load',
        ctx,
      ),
    ).toMatchObject({ failure: 'server-error', message: expect.stringContaining('restart failed at session/load') });
  });
  it('maps timeouts and server exits, and lets Ctrl-C and bugs through', () => {
    expect(failureOf(new TimeoutError('slow'), 'live', ctx).failure).toBe('timeout');
    expect(failureOf(new AgyError(4, 'server-exited', 'gone'), 'live', ctx).failure).toBe('server-error');
    expect(() => failureOf(new InterruptedError(), 'live', ctx)).toThrow(InterruptedError);
    expect(() => failureOf(new TypeError('bug'), 'live', ctx)).toThrow(TypeError);
  });
});

describe('live beats static', () => {
  const tokenMissing: CheckResult = {
    id: 'token-file',
    ok: false,
    severity: 'error',
    failure: 'not-authenticated',
    message: 'no token file',
    hint: 'run: agyctl login',
    ms: 0,
    liveNote: 'no acp_token.json; elsewhere',
  };
  const modeWrong: CheckResult = {
    id: 'token-file',
    ok: false,
    severity: 'error',
    failure: 'misconfigured',
    message: 'mode 0644',
    hint: 'chmod',
    ms: 0,
  };
  const live = (ok: boolean): CheckResult => ({
    id: 'live',
    ok,
    severity: 'error',
    message: 'live',
    ms: 0,
    ...(ok ? {} : { failure: 'not-authenticated' as const }),
  });

  it('a passing live check turns a "credentials not in the file" finding into a note; the run is ok', () => {
    const checks = applyLiveEvidence([tokenMissing, live(true)]);
    expect(checks[0]).toEqual({
      id: 'token-file',
      ok: false,
      severity: 'warning',
      result: 'warning',
      message: 'no acp_token.json; elsewhere',
      ms: 0,
      decidedBy: 'live',
    });
    expect(overallStatus(checks)).toBe('ok');
  });

  it('without a passing live check, or for a mode finding, nothing changes', () => {
    expect(overallStatus(applyLiveEvidence([tokenMissing]))).toBe('not-authenticated');
    expect(overallStatus(applyLiveEvidence([tokenMissing, live(false)]))).toBe('not-authenticated');
    expect(overallStatus(applyLiveEvidence([modeWrong, live(true)]))).toBe('misconfigured');
  });
});
