/**
 * What an error during a server step means for the check: an auth verdict,
 * a timeout, or a server failure. Ctrl-C and bugs are not findings: they
 * propagate (exit 130 / exit 1).
 */

import { isPersonalAccountRefusal, PERSONAL_ACCOUNT_CODE, personalAccountRefused } from '../acp/account-refusal.js';
import { AcpError } from '../acp/acp-error.js';
import { classifyAuthError } from '../acp/protocol.js';
import { AgyError, EXIT, InterruptedError } from '../core/errors.js';
import { type Finding, fail, LOGIN_HINT } from './check-result.js';

export const REAUTH_HINT = 'the stored credential was revoked or has expired; run: agyctl login';

export interface StepContext {
  /** The --timeout value as the user wrote it, for messages. */
  timeoutLabel: string;
}

/** Servers put paragraphs in data.message; a check line needs the gist. */
export function gist(text: string, max = 200): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

export function failureOf(err: unknown, step: string, ctx: StepContext): Finding {
  if (err instanceof InterruptedError) throw err;
  if (err instanceof AcpError && isPersonalAccountRefusal(err.serverText)) return refusedFinding(step);
  if (err instanceof AgyError && err.code === PERSONAL_ACCOUNT_CODE) return refusedFinding(step);
  if (err instanceof AcpError) {
    const auth = classifyAuthError(err);
    if (auth === 'reauth-required')
      return fail(auth, `${step}: a new login is needed (${gist(err.message)})`, REAUTH_HINT);
    if (auth === 'not-authenticated') return fail(auth, `${step}: not logged in (${gist(err.message)})`, LOGIN_HINT);
    return fail(
      'server-error',
      `${step}: ${gist(err.message)}`,
      'run with --verbose (or --trace FILE) to see the server side',
    );
  }
  if (err instanceof AgyError) {
    if (err.exit === EXIT.timeout)
      return fail(
        'timeout',
        `${step}: --timeout ${ctx.timeoutLabel} passed (${err.message})`,
        `raise --timeout; RC01 takes 5-6 s to start`,
      );
    if (err.exit === EXIT.auth) return fail('not-authenticated', `${step}: ${err.message}`, err.hint ?? LOGIN_HINT);
    if (err.exit === EXIT.server)
      return {
        ...fail('server-error', `${step}: ${err.message}`, err.hint),
        ...(err.code === 'server' ? {} : { code: err.code }),
      };
  }
  throw err;
}

/** Google refuses the account itself: an auth verdict with its own code, whatever step met it. */
function refusedFinding(step: string): Finding {
  const e = personalAccountRefused();
  return { ...fail('not-authenticated', `${step}: ${e.message}`, e.hint), code: e.code };
}
