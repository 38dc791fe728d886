/**
 * What a hostile server can put in front of a person at sign-in: format
 * characters (bidi overrides, zero-width) that reorder or hide text, links
 * inside its own words, a user name before the host of any kind of sign-in
 * URL, a device "page" that is any page of Google's sign-in host, and
 * another app's OAuth client or scopes.
 */
import { describe, expect, it } from 'vitest';
import { serverText } from '../../src/acp/redact.js';
import { shownMessage } from '../../src/login/capture/elicitation-source.js';
import { antigravity } from '../../src/profiles/antigravity.js';
import {
  unexpectedClient,
  validateAuthUrl,
  validateCodeEntryUrl,
  validateElicitedUrl,
} from '../../src/profiles/auth-url.js';
import { sanitizeForTerminal } from '../../src/util/terminal-text.js';

const AUTH = (redirect: string): string =>
  `https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com&redirect_uri=${encodeURIComponent(redirect)}&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcloud-platform&state=S`;

describe('format characters', () => {
  it.each([
    ['RLO … PDF', 'a\u202emoc.elgoog\u202cb', 'amoc.elgoogb'],
    ['isolates', '\u2066x\u2069\u2067y\u2069\u2068z\u2069', 'xyz'],
    ['zero-width space, joiner, non-joiner, word joiner', 'go\u200bo\u200dg\u200cl\u2060e', 'google'],
    ['BOM and soft hyphen', '\ufeffsign\u00adin', 'signin'],
    ['LRM / RLM / ALM', 'a\u200eb\u200fc\u061cd', 'abcd'],
  ])('are stripped from server text: %s', (_, text, shown) => {
    expect(sanitizeForTerminal(text)).toBe(shown);
    expect(sanitizeForTerminal(text, { singleLine: true })).toBe(shown);
    expect(serverText(text)).toBe(shown);
  });

  it('keep letters of every script and emoji (only category Cf goes)', () => {
    expect(sanitizeForTerminal('Grüße, مرحبا, こんにちは 👍')).toBe('Grüße, مرحبا, こんにちは 👍');
  });
});

describe("the server's words (an elicitation message)", () => {
  it('carry no link and no format character', () => {
    expect(shownMessage('Open https://accounts.google.com.evil.example/x or HTTP://evil.example \u202eok')).toBe(
      'Open https[:]//accounts.google.com.evil.example/x or HTTP[:]//evil.example ok',
    );
  });
});

describe('a user name before the host', () => {
  it.each([
    ['loopback', () => validateAuthUrl(AUTH('http://127.0.0.1:4000/').replace('https://', 'https://evil.example@'))],
    ['loopback redirect_uri', () => validateAuthUrl(AUTH('http://evil@127.0.0.1:4000/'))],
    [
      'loopback, elicited',
      () => validateElicitedUrl(AUTH('http://127.0.0.1:4000/').replace('https://', 'https://evil.example@')),
    ],
    [
      'code entry',
      () =>
        validateCodeEntryUrl(
          AUTH('https://codeassist.google.com/authcode').replace('https://', 'https://evil.example@'),
        ),
    ],
    ['code entry redirect_uri', () => validateCodeEntryUrl(AUTH('https://evil@codeassist.google.com/authcode'))],
    ['device', () => validateElicitedUrl('https://evil.example@www.google.com/device')],
  ])('is refused in every kind of sign-in URL: %s', (_, check) => {
    const v = check();
    expect(v.ok).toBe(false);
    expect(!v.ok && v.reason).toMatch(/user name/);
  });

  it('and the same URLs without one pass', () => {
    expect(validateAuthUrl(AUTH('http://127.0.0.1:4000/')).ok).toBe(true);
    expect(validateCodeEntryUrl(AUTH('https://codeassist.google.com/authcode')).ok).toBe(true);
  });
});

describe('the device kind', () => {
  it.each([
    'https://www.google.com/device',
    'https://www.google.com/device?user_code=ABCD-EFGH',
    'https://google.com/device/',
    'https://accounts.google.com/o/oauth2/device/usercode',
    'https://accounts.google.com/device?user_code=ABCD-EFGH&hl=de',
  ])('takes Google device page %s', (url) => {
    const v = validateElicitedUrl(url);
    expect(v.ok && v.value.kind).toBe('device');
  });

  it.each([
    [
      'https://accounts.google.com/ServiceLogin?continue=https://evil.example/',
      /not one of Google's device-code pages/,
    ],
    ['https://accounts.google.com/signin/v2/identifier', /not one of Google's device-code pages/],
    ['https://www.google.com/url?q=https://evil.example/', /not one of Google's device-code pages/],
    ['https://www.google.com/device/../url', /not one of Google's device-code pages/],
    ['https://www.google.com/device?continue=https://evil.example/', /takes no continue/],
  ])('refuses %s', (url, reason) => {
    const v = validateElicitedUrl(url);
    expect(v.ok).toBe(false);
    expect(!v.ok && v.reason).toMatch(reason);
  });
});

describe("a client_id or scope that is not the profile's", () => {
  const known = antigravity.oauthClient;
  it('is named, for a warning', () => {
    const url = AUTH('http://127.0.0.1:4000/')
      .replace('1071006060591-tmhssin2h21lcre235vtolojh4g403ep', 'other')
      .replace('cloud-platform', 'cloud-platform+https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fdrive');
    expect(unexpectedClient(url, known)).toEqual({
      clientId: 'other.apps.googleusercontent.com',
      scopes: ['https://www.googleapis.com/auth/drive'],
    });
  });

  it("is nothing for the profile's own client and scopes, or a profile whose client was not measured", () => {
    expect(unexpectedClient(AUTH('http://127.0.0.1:4000/'), known)).toBeUndefined();
    expect(unexpectedClient('https://www.google.com/device?user_code=A', known)).toBeUndefined();
    expect(unexpectedClient(AUTH('http://127.0.0.1:4000/').replace('client_id=1', 'client_id=2'), undefined)).toBe(
      undefined,
    );
  });
});
