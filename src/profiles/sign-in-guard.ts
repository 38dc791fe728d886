/**
 * gemini-cli answers session/new without usable credentials by starting an
 * interactive sign-in (a browser, or a URL on stdout and a code read from
 * stdin) and waits minutes for it. Outside `login` that is never wanted:
 * the first sign-in URL in the server's output fails the call at once, as
 * "not logged in", or "re-authentication required" when stored credentials
 * exist (they were refused: expired or revoked).
 */
import fs from 'node:fs';
import { AcpError } from '../acp/acp-error.js';
import { findUrls, looksLikeSignInUrl } from './auth-url.js';
import type { ServerProfile } from './types.js';

export function signInGuard(profile: ServerProfile, stateDir: string): (line: string) => Error | undefined {
  return (line) => {
    if (!findUrls(line).some(looksLikeSignInUrl)) return undefined;
    const token = profile.files(stateDir).token;
    const message = fs.existsSync(token)
      ? `Authentication required: the stored credentials (${token}) were not accepted (expired, revoked, or Google could not be reached), so the server started an interactive sign-in; re-authentication required`
      : 'Authentication required: the server has no stored credentials and started an interactive sign-in';
    return new AcpError('session', { code: -32000, message });
  };
}

/** Outside login, never let the server open a browser on a desktop: NO_BROWSER makes it print the URL instead, which the guard sees. */
export function quietServerEnv(profile: ServerProfile, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return profile.quirks.signInDuringSession ? { ...env, NO_BROWSER: 'true' } : env;
}
