/**
 * Validation of the sign-in URL the server tried to open, and of the
 * redirect address a user pastes back. Nothing unvalidated is ever shown as
 * "the" URL or delivered to the server's listener.
 */
export interface AuthUrl {
  url: string;
  port: number;
  redirectUri: string;
  /** Path of the redirect_uri: `/` on RC01, `/oauth2callback` on gemini-cli. */
  redirectPath: string;
  state: string | undefined;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; reason: string };

const GOOGLE_AUTH_HOSTS = new Set(['accounts.google.com']);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Candidate URLs in free text (shim arguments, server output lines). */
export function findUrls(text: string): string[] {
  return text.match(/https?:\/\/[^\s"'<>`\x1b]+/g) ?? [];
}

export function looksLikeSignInUrl(candidate: string): boolean {
  try {
    return GOOGLE_AUTH_HOSTS.has(new URL(candidate).hostname);
  } catch {
    return false;
  }
}

/**
 * `https://accounts.google.com@evil.example/` reads as Google's to a person;
 * no sign-in URL (nor its redirect_uri) has a reason to carry a user name.
 */
function hasUserinfo(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

const USERINFO = 'the URL carries a user name (user@ before the host), which no sign-in URL has';

/** A URL to show a person: it parses, is https and carries no user name. */
function httpsUrl(text: string): Validation<URL> {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (url.protocol !== 'https:')
    return { ok: false, reason: `scheme is ${url.protocol.replace(':', '')}, expected https` };
  if (hasUserinfo(url)) return { ok: false, reason: USERINFO };
  return { ok: true, value: url };
}

export function validateAuthUrl(text: string): Validation<AuthUrl> {
  const parsed = httpsUrl(text);
  if (!parsed.ok) return parsed;
  const url = parsed.value;
  if (!GOOGLE_AUTH_HOSTS.has(url.hostname))
    return { ok: false, reason: `host ${url.hostname} is not Google's sign-in host (accounts.google.com)` };
  if (url.searchParams.get('response_type') !== 'code') return { ok: false, reason: 'response_type is not "code"' };
  const redirect = url.searchParams.get('redirect_uri');
  if (!redirect) return { ok: false, reason: 'no redirect_uri' };
  let r: URL;
  try {
    r = new URL(redirect);
  } catch {
    return { ok: false, reason: `redirect_uri is not a URL: ${redirect}` };
  }
  if (r.protocol !== 'http:' || !LOOPBACK_HOSTS.has(r.hostname))
    return { ok: false, reason: `redirect_uri ${redirect} is not on 127.0.0.1 or localhost` };
  if (hasUserinfo(r)) return { ok: false, reason: `redirect_uri: ${USERINFO}` };
  if (!r.port) return { ok: false, reason: `redirect_uri ${redirect} has no port` };
  return {
    ok: true,
    value: {
      url: url.toString(),
      port: Number(r.port),
      redirectUri: redirect,
      redirectPath: r.pathname || '/',
      state: url.searchParams.get('state') ?? undefined,
    },
  };
}

/**
 * gemini-cli's code-entry sign-in: a Google URL whose redirect_uri is an
 * https page (codeassist.google.com/authcode) that shows the user a code to
 * paste, instead of a loopback listener. Seen only on the server's stdout.
 */
export function validateCodeEntryUrl(text: string): Validation<AuthUrl> {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (url.protocol !== 'https:' || !GOOGLE_AUTH_HOSTS.has(url.hostname))
    return { ok: false, reason: 'not a Google sign-in URL' };
  if (hasUserinfo(url)) return { ok: false, reason: USERINFO };
  if (url.searchParams.get('response_type') !== 'code') return { ok: false, reason: 'response_type is not "code"' };
  let r: URL;
  try {
    r = new URL(url.searchParams.get('redirect_uri') ?? '');
  } catch {
    return { ok: false, reason: 'no usable redirect_uri' };
  }
  if (r.protocol !== 'https:' || LOOPBACK_HOSTS.has(r.hostname))
    return { ok: false, reason: `redirect_uri ${r.toString()} is not a code-display page` };
  if (hasUserinfo(r)) return { ok: false, reason: `redirect_uri: ${USERINFO}` };
  return {
    ok: true,
    value: {
      url: url.toString(),
      port: 0,
      redirectUri: r.toString(),
      redirectPath: r.pathname,
      state: url.searchParams.get('state') ?? undefined,
    },
  };
}

/**
 * What an ACP URL elicitation may show: a loopback sign-in URL as above, or a
 * device-code / verification page on Google's own hosts (no loopback
 * redirect_uri: the server learns the outcome itself, so there is no tunnel
 * and nothing to paste). Hosts are compared exactly after the URL parser's
 * punycode conversion, so lookalikes and IDN homographs never match.
 */
export type ElicitedUrl = { kind: 'loopback'; auth: AuthUrl } | { kind: 'device'; auth: AuthUrl };

/**
 * Google's device-code pages, host and path exactly: www.google.com/device
 * (what Google's device flow names as verification_url) and the sign-in
 * host's own device page. Any other page of the sign-in host could forward
 * the user elsewhere (`continue=`), so it is not a device page.
 */
const DEVICE_PAGES: ReadonlyMap<string, RegExp> = new Map([
  ['www.google.com', /^\/device\/?$/],
  ['google.com', /^\/device\/?$/],
  ['accounts.google.com', /^\/(?:device|o\/oauth2\/device\/usercode)\/?$/],
]);
/** What a device page's query may say: the code to enter and the page's language. */
const DEVICE_QUERY = new Set(['user_code', 'hl']);

function devicePageProblem(url: URL): string | undefined {
  const path = DEVICE_PAGES.get(url.hostname);
  if (!path)
    return `host ${url.hostname} is not Google's sign-in host (accounts.google.com) or device page (www.google.com/device)`;
  if (!path.test(url.pathname)) return `${url.hostname}${url.pathname} is not one of Google's device-code pages`;
  const extra = [...url.searchParams.keys()].filter((k) => !DEVICE_QUERY.has(k));
  if (extra.length > 0) return `a device-code page takes no ${extra.join(', ')}`;
  return undefined;
}

export function validateElicitedUrl(text: string): Validation<ElicitedUrl> {
  const loopback = validateAuthUrl(text);
  if (loopback.ok) return { ok: true, value: { kind: 'loopback', auth: loopback.value } };
  const parsed = httpsUrl(text);
  if (!parsed.ok) return parsed;
  const url = parsed.value;
  // A loopback redirect that failed validateAuthUrl, or a code-display page whose code would have nowhere to go.
  if (url.searchParams.get('redirect_uri') !== null && GOOGLE_AUTH_HOSTS.has(url.hostname))
    return { ok: false, reason: loopback.reason };
  const problem = devicePageProblem(url);
  if (problem) return { ok: false, reason: problem };
  return {
    ok: true,
    value: {
      kind: 'device',
      auth: { url: url.toString(), port: 0, redirectUri: '', redirectPath: '', state: undefined },
    },
  };
}

/** What a sign-in URL asks for beyond the profile's known OAuth client: another client_id, or scopes it does not use. */
export interface UnexpectedClient {
  clientId?: string;
  scopes?: string[];
}

/**
 * A sign-in URL naming a client_id or scopes other than the profile's known
 * ones may be a server asking the user to grant someone else access. Only
 * warned about: a new server build may change them (docs/assumptions.md).
 */
export function unexpectedClient(
  url: string,
  known: { clientId: string; scopes: readonly string[] } | undefined,
): UnexpectedClient | undefined {
  if (!known) return undefined;
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    return undefined;
  }
  const clientId = params.get('client_id');
  const scopes = (params.get('scope') ?? '').split(/\s+/).filter((s) => s !== '' && !known.scopes.includes(s));
  const found: UnexpectedClient = {
    ...(clientId !== null && clientId !== known.clientId ? { clientId } : {}),
    ...(scopes.length > 0 ? { scopes } : {}),
  };
  return Object.keys(found).length > 0 ? found : undefined;
}

export interface PastedRedirect {
  /** Where to deliver it: always 127.0.0.1 (the listener binds there), never a host from the paste. */
  deliverTo: URL;
}

/** Users paste with quotes, backticks, angle brackets or a trailing period; tolerate that, nothing more. */
function cleanPaste(input: string): string {
  return input.trim().replace(/^['"`<]+|['"`>.]+$/g, '');
}

/**
 * What a pasted line is, read the one way `login finish` and every prompt
 * (login's, connect's) read it: `address` (a scheme, or the loopback host
 * first), `piece` (query text with no address in front: the second line of
 * an address pasted over two), `bare-code` (a code alone, as Google's
 * code-display page shows it: `4/0Ab…`, or 20 code characters or more),
 * or `other`.
 */
export type PasteShape = 'empty' | 'address' | 'piece' | 'bare-code' | 'other';

export function pasteShape(input: string): PasteShape {
  const text = cleanPaste(input);
  if (text === '') return 'empty';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /^(?:127\.0\.0\.1|localhost)(?:[:/?]|$)/i.test(text)) return 'address';
  if (/[=&?]/.test(text)) return 'piece';
  // Google's codes read `4/0Ab…`; a long run of code characters is one too. A short word ("hello") is not.
  if (/^\d\/[\w.~/-]+$/.test(text) || /^[\w.~/-]{20,}$/.test(text)) return 'bare-code';
  return 'other';
}

/** Why a paste that is not an address cannot be delivered to a loopback login (undefined: it is an address). */
export function notAnAddress(input: string): string | undefined {
  switch (pasteShape(input)) {
    case 'empty':
      return 'empty line';
    case 'bare-code':
      return 'that is a bare code; this login needs the whole address your browser ended on (http://127.0.0.1:PORT/?state=…&code=…), which carries the state as well as the code';
    case 'piece':
      return 'that is a piece of an address, with no http://127.0.0.1:PORT/ in front (pasted over two lines?); paste the whole address on one line';
    case 'other':
      return 'that is not a URL; paste the whole address from the browser bar (http://127.0.0.1:...)';
    default:
      return undefined;
  }
}

/** The first line of an address pasted over two ends inside (or before) its state. */
function cutShort(url: URL, expected: AuthUrl): string | undefined {
  if (expected.state === undefined) return undefined;
  const state = url.searchParams.get('state');
  if (state === expected.state) return undefined;
  if (url.search.endsWith(`state=${state ?? ''}`) && expected.state.startsWith(state ?? ''))
    return "the address is cut short (it ends in the middle of this login's state); paste it on one line";
  if (state === null && /[?&](?:s|st|sta|stat)$/.test(url.search))
    return 'the address is cut short (it ends before its state); paste it on one line';
  return undefined;
}

export function validatePastedRedirect(input: string, expected: AuthUrl): Validation<PastedRedirect> {
  const notAddress = notAnAddress(input);
  if (notAddress) return { ok: false, reason: notAddress };
  const text = cleanPaste(input);
  let url: URL;
  try {
    url = new URL(/^https?:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    return {
      ok: false,
      reason: 'that is not a URL; paste the whole address from the browser bar (http://127.0.0.1:...)',
    };
  }
  if (!LOOPBACK_HOSTS.has(url.hostname))
    return { ok: false, reason: `host ${url.hostname} is not 127.0.0.1 or localhost` };
  if (url.protocol !== 'http:') return { ok: false, reason: 'the redirect address starts with http://, not https://' };
  if (Number(url.port) !== expected.port)
    return { ok: false, reason: `port ${url.port || '(none)'} is not the login's port ${expected.port}` };
  if (url.pathname !== expected.redirectPath)
    return { ok: false, reason: `path ${url.pathname} is not ${expected.redirectPath}` };
  if (url.searchParams.has('error'))
    return {
      ok: false,
      reason: `the browser reports an error (${url.searchParams.get('error')}); sign in again with the same URL`,
    };
  // Asked before the code: Google puts the state first, so an address cut inside it has no code either.
  const cut = cutShort(url, expected);
  if (cut) return { ok: false, reason: cut };
  if (!url.searchParams.get('code'))
    return {
      ok: false,
      reason: 'no code in that address; finish the sign-in first, then paste the address the browser ended on',
    };
  const state = url.searchParams.get('state');
  if (expected.state !== undefined && state !== expected.state) {
    return { ok: false, reason: 'state does not match this login (is it from an older attempt?)' };
  }
  const deliverTo = new URL(url.toString());
  deliverTo.hostname = '127.0.0.1';
  return { ok: true, value: { deliverTo } };
}
