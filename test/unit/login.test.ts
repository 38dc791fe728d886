import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { UrlCapture } from '../../src/login/capture/pipeline.js';
import { defaultTunnelTarget, parseSshTarget, tunnelCommand } from '../../src/login/present.js';
import { createShimDir, loginServerEnv, SHIM_NAMES, type ShimDir } from '../../src/login/shims.js';
import { type AuthUrl, findUrls, validateAuthUrl, validatePastedRedirect } from '../../src/profiles/auth-url.js';

const GOOD =
  'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=x.apps.googleusercontent.com&redirect_uri=http%3A%2F%2F127.0.0.1%3A35293%2F&scope=a+b&state=S123&access_type=offline&code_challenge=c&code_challenge_method=S256';

describe('sign-in URL validation', () => {
  it('keeps port, path and state of a good URL', () => {
    const v = validateAuthUrl(GOOD);
    expect(v).toMatchObject({
      ok: true,
      value: { port: 35293, redirectPath: '/', state: 'S123', redirectUri: 'http://127.0.0.1:35293/' },
    });
  });

  it.each([
    [GOOD.replace('https:', 'http:'), /https/],
    [GOOD.replace('accounts.google.com', 'accounts.google.com.evil.example'), /not Google/],
    [GOOD.replace('response_type=code', 'response_type=token'), /response_type/],
    [GOOD.replace('http%3A%2F%2F127.0.0.1%3A35293%2F', 'http%3A%2F%2Fevil.example%3A35293%2F'), /127\.0\.0\.1/],
    [GOOD.replace('%3A35293', ''), /no port/],
    [GOOD.replace(/&redirect_uri=[^&]+/, ''), /no redirect_uri/],
    ['not a url', /not a URL/],
  ])('rejects %s', (url, reason) => {
    const v = validateAuthUrl(url);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.reason).toMatch(reason);
  });

  it('finds URLs in noisy lines', () => {
    expect(findUrls(`\x1b[1mOpen the following link to authenticate the ACP server: ${GOOD}\x1b[0m`)).toEqual([GOOD]);
  });
});

describe('pasted redirects', () => {
  const auth = (validateAuthUrl(GOOD) as { value: AuthUrl }).value;
  it('accepts the address the browser ended on (also with localhost, quotes, no scheme) and delivers to 127.0.0.1', () => {
    for (const paste of [
      'http://127.0.0.1:35293/?state=S123&code=4/x&scope=a',
      `'http://localhost:35293/?code=4/x&state=S123'`,
      '127.0.0.1:35293/?code=4/x&state=S123',
      // Quoted as people copy it from a terminal or a chat.
      '"http://127.0.0.1:35293/?code=4/x&state=S123"',
      '`http://127.0.0.1:35293/?code=4/x&state=S123`',
    ]) {
      const v = validatePastedRedirect(paste, auth);
      expect(v.ok, paste).toBe(true);
      if (v.ok) expect(v.value.deliverTo.host).toBe('127.0.0.1:35293');
    }
  });

  it.each([
    ['http://127.0.0.1:35294/?code=x&state=S123', /port/],
    ['http://127.0.0.1:35293/cb?code=x&state=S123', /path/],
    ['http://127.0.0.1:35293/?state=S123', /no code/],
    ['http://127.0.0.1:35293/?code=x&state=OTHER', /state/],
    ['http://example.com:35293/?code=x&state=S123', /host/],
    ['http://127.0.0.1:35293/?error=access_denied&state=S123', /error/],
    ['', /empty/],
    // A bare code is named as one, never read as a host (4/0Ab... once became "host 0.0.0.4").
    ['4/0AbCdEf-by-hand', /bare code/],
    ['"4/0AbCdEf-by-hand"', /bare code/],
    // An address pasted over two lines: the first ends inside its state, the second is a piece.
    ['http://127.0.0.1:35293/?code=4/x&state=S1', /cut short.*one line/],
    ['http://127.0.0.1:35293/?code=4/x&st', /cut short.*one line/],
    // Google's order puts the state first: cut inside it, the first line has no code either.
    ['http://127.0.0.1:35293/?state=S1', /cut short.*one line/],
    ['http://127.0.0.1:35293/?state=', /cut short.*one line/],
    ['http://127.0.0.1:35293/?st', /cut short.*one line/],
    ['ate=S123&code=4/x', /piece of an address.*one line/],
    ['23&scope=a', /piece of an address/],
  ])('refuses %s', (paste, reason) => {
    const v = validatePastedRedirect(paste, auth);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.reason).toMatch(reason);
  });
});

describe('tunnel command', () => {
  it('uses --ssh-target, then SSH_CONNECTION, then the host name', () => {
    expect(tunnelCommand(4000, parseSshTarget('ops@box:2222')!)).toBe(
      'ssh -N -L 4000:127.0.0.1:4000 -o ExitOnForwardFailure=yes -p 2222 -- ops@box',
    );
    expect(tunnelCommand(4000, defaultTunnelTarget({ USER: 'me', SSH_CONNECTION: '10.0.0.5 51000 10.0.0.9 22' }))).toBe(
      'ssh -N -L 4000:127.0.0.1:4000 -o ExitOnForwardFailure=yes -- me@10.0.0.9',
    );
    expect(defaultTunnelTarget({ USER: 'me' }).host.length).toBeGreaterThan(0);
    expect(parseSshTarget('a b')).toBeUndefined();
    expect(parseSshTarget('host:99999')).toBeUndefined();
  });
});

describe('shims and capture', () => {
  let shims: ShimDir | undefined;
  afterEach(() => shims?.remove());

  it('every shim records its arguments; the server env points at them and drops browser-disabling variables', () => {
    shims = createShimDir({});
    expect(fs.statSync(shims.dir).mode & 0o777).toBe(0o700);
    const env = loginServerEnv(
      { PATH: '/usr/bin', CI: 'true', NO_BROWSER: 'false', DEBIAN_FRONTEND: 'noninteractive' },
      shims,
      { fakeDisplay: true },
    );
    expect(env.PATH!.split(':')[0]).toBe(shims.dir);
    expect(env.BROWSER).toBe(shims.browser);
    expect(env.DISPLAY).toBeTruthy();
    expect(env).not.toHaveProperty('CI');
    expect(env).not.toHaveProperty('NO_BROWSER');
    expect(env).not.toHaveProperty('DEBIAN_FRONTEND');
    expect(loginServerEnv({ DISPLAY: ':7' }, shims, { fakeDisplay: true }).DISPLAY).toBe(':7');
    expect(loginServerEnv({}, shims, { fakeDisplay: false }).DISPLAY).toBeUndefined();
    for (const name of SHIM_NAMES) execFileSync(`${shims.dir}/${name}`, [`arg-of-${name}`]);
    const log = fs.readFileSync(shims.log, 'utf8');
    for (const name of SHIM_NAMES) expect(log).toContain(`${name}\targ-of-${name}`);
  });

  it('the first valid URL from any channel wins; invalid ones are reported, not used', async () => {
    shims = createShimDir({});
    const invalid: string[] = [];
    const capture = new UrlCapture(shims, (c, loud) => void (loud && invalid.push(c.reason)));
    capture.feedLine('see https://accounts.google.com/o/oauth2/v2/auth?response_type=token', 'stderr');
    capture.feedLine('docs at https://example.com/help', 'stdout');
    execFileSync(`${shims.dir}/xdg-open`, [GOOD]);
    const found = await capture.found;
    expect(found).toMatchObject({ source: 'shim', via: 'xdg-open', auth: { port: 35293 } });
    expect(invalid).toEqual(['response_type is not "code"']);
    // The quiet one is evidence all the same. Each ended its line, so it was held as a possible prefix of a split URL
    // and recorded when the capture ended: the order between the two channels says nothing.
    expect(capture.evidence.candidates.map((c) => c.channel).sort()).toEqual(['stderr', 'stdout']);
    capture.close();
  });

  it('remove() deletes the directory', () => {
    const s = createShimDir({});
    s.remove();
    expect(fs.existsSync(s.dir)).toBe(false);
  });
});
