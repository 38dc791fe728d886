/**
 * Google's Code Assist refuses personal accounts (free, AI Pro, AI Ultra) to
 * gemini-cli: after the browser step its setup answers an ineligible tier
 * with `reasonCode: UNSUPPORTED_CLIENT`, and gemini-cli passes the server's
 * `reasonMessage` on as its error (an `authenticate` or `session/new` error,
 * or a line on stderr before it exits). A new sign-in cannot fix it, so it
 * is named with its own code and the one way forward.
 */
import { AgyError, EXIT } from '../core/errors.js';

export const PERSONAL_ACCOUNT_CODE = 'personal-account-unsupported';

/** The one sentence users get (docs/gemini-cli.md carries it verbatim; a test keeps the two equal). */
export const PERSONAL_ACCOUNT_SENTENCE =
  "Personal Google accounts are no longer served by gemini-cli: use antigravity-acp (agyctl's default profile), or, for a Workspace or Code Assist Standard/Enterprise account, set GOOGLE_CLOUD_PROJECT.";

const HINT =
  'agyctl --profile antigravity login; or export GOOGLE_CLOUD_PROJECT=<your project> where the server runs and run agyctl --profile gemini-cli login again';

/** The reasonCode, or the reasonMessage's own words (gemini-cli 0.61.0 passes only the message on). */
const REFUSAL = /\bUNSUPPORTED_CLIENT\b|no longer supported for Gemini Code Assist for individuals/i;

export function isPersonalAccountRefusal(text: string): boolean {
  return REFUSAL.test(text);
}

export function personalAccountRefused(): AgyError {
  return new AgyError(EXIT.auth, PERSONAL_ACCOUNT_CODE, PERSONAL_ACCOUNT_SENTENCE, { hint: HINT });
}
