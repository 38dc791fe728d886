/**
 * A sign-in URL taken apart for a report: host, path, the redirect's
 * host, port and path, and every parameter, with the values that make the
 * URL usable by someone else (state, the PKCE challenge, any code) redacted.
 */
import { REDACTED } from '../acp/redact.js';
import type { AuthUrl } from '../profiles/auth-url.js';

const SECRET_PARAMS = new Set([
  'state',
  'code',
  'code_challenge',
  'code_verifier',
  'nonce',
  'access_token',
  'id_token',
  'login_hint',
]);

export interface UrlAnatomy {
  host: string;
  path: string;
  redirect: { uri: string; host: string; port: number | null; path: string };
  params: Record<string, string>;
}

export function describeUrl(auth: AuthUrl): UrlAnatomy {
  const url = new URL(auth.url);
  const params: Record<string, string> = {};
  for (const [k, v] of url.searchParams) params[k] = SECRET_PARAMS.has(k) ? REDACTED : v;
  let redirect: URL | undefined;
  try {
    redirect = new URL(auth.redirectUri);
  } catch {
    redirect = undefined;
  }
  return {
    host: url.hostname,
    path: url.pathname,
    redirect: {
      uri: auth.redirectUri,
      host: redirect?.hostname ?? '',
      port: auth.port > 0 ? auth.port : null,
      path: auth.redirectPath,
    },
    params,
  };
}

/** Human lines for the probe report's URL part. */
export function renderAnatomy(a: UrlAnatomy): string[] {
  return [
    `url host:     ${a.host}  path ${a.path}`,
    a.redirect.uri === ''
      ? 'redirect:     none (a page the server follows itself: no loopback listener)'
      : `redirect:     ${a.redirect.uri}${a.redirect.port ? ` (port ${a.redirect.port}, path ${a.redirect.path})` : ' (a code-display page: no loopback listener)'}`,
    `parameters:   ${Object.entries(a.params)
      .filter(([k]) => k !== 'redirect_uri')
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  ];
}
