/**
 * ACP URL elicitation as a capture channel: what an elicited URL may be
 * (a loopback sign-in URL, or a device page on Google's own hosts; no
 * lookalike), and how agyctl answers each elicitation/create it gets:
 * accept (login) or cancel (probe) for a usable URL tied to its
 * authenticate, decline for an unusable one or one outside a sign-in,
 * -32602 for a mode it did not advertise, -32601 for other requests.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Connection } from '../../src/acp/connection.js';
import { initialize, initializeParams } from '../../src/acp/protocol.js';
import { type ElicitationAnswer, signInRequestHandler } from '../../src/login/capture/elicitation-source.js';
import { describeCandidate } from '../../src/login/capture/evidence.js';
import { UrlCapture } from '../../src/login/capture/pipeline.js';
import { createShimDir, type ShimDir } from '../../src/login/shims.js';
import { validateElicitedUrl } from '../../src/profiles/auth-url.js';

const GOOD =
  'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=x.apps.googleusercontent.com&redirect_uri=http%3A%2F%2F127.0.0.1%3A35293%2F&scope=a+b&state=S123&code_challenge=CHAL&code_challenge_method=S256';
const DEVICE = 'https://www.google.com/device?user_code=ABCD-EFGH';

describe('validateElicitedUrl', () => {
  it('takes a loopback sign-in URL as loopback and a Google device page as device', () => {
    const loopback = validateElicitedUrl(GOOD);
    expect(loopback.ok && loopback.value.kind).toBe('loopback');
    expect(loopback.ok && loopback.value.auth.port).toBe(35293);
    const device = validateElicitedUrl(DEVICE);
    expect(device.ok && device.value).toEqual({
      kind: 'device',
      auth: { url: DEVICE, port: 0, redirectUri: '', redirectPath: '', state: undefined },
    });
    expect(validateElicitedUrl('https://accounts.google.com/o/oauth2/device/usercode').ok).toBe(true);
  });

  it.each([
    ['http://www.google.com/device', /scheme is http/],
    ['https://www.google.com/search?q=device', /not one of Google's device-code pages/],
    ['https://accounts.google.com.evil.example/device', /host accounts\.google\.com\.evil\.example/],
    ['https://accounts.google.com@evil.example/device', /user name/],
    ['https://user@accounts.google.com/device', /user name/],
    // Cyrillic о in "gооgle": the parser turns it into punycode, which never matches.
    ['https://accounts.g\u043e\u043egle.com/o/oauth2/v2/auth', /host accounts\.xn--/],
    ['https://www.google.com.xn--80ak6aa92e.com/device', /not Google's sign-in host/],
    [
      'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&redirect_uri=https%3A%2F%2Fcodeassist.google.com%2Fauthcode',
      /not on 127\.0\.0\.1/,
    ],
    [
      'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%2F',
      /no port/,
    ],
  ])('refuses %s', (url, reason) => {
    const v = validateElicitedUrl(url);
    expect(v.ok).toBe(false);
    expect(!v.ok && v.reason).toMatch(reason);
  });
});

function pair() {
  const fromServer = new PassThrough();
  const toServer = new PassThrough();
  const written: Array<{ id?: unknown; method?: string; result?: unknown; error?: { code: number } }> = [];
  toServer.on('data', (b: Buffer) => {
    for (const l of b.toString().split('\n').filter(Boolean)) written.push(JSON.parse(l));
  });
  return { conn: new Connection(fromServer, toServer), fromServer, written };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 10));
const elicit = (id: unknown, params: Record<string, unknown>): string =>
  `${JSON.stringify({ jsonrpc: '2.0', id, method: 'elicitation/create', params })}\n`;

let shims: ShimDir | undefined;
afterEach(() => shims?.remove());

/** A connection with a pending authenticate (its id) and the sign-in's handler installed. */
async function signingIn(answer: ElicitationAnswer) {
  const p = pair();
  shims = createShimDir({});
  const rejected: string[] = [];
  const capture = new UrlCapture(shims, (c) => rejected.push(describeCandidate(c)));
  const answered: string[] = [];
  p.conn.onRequestAnswered((m, how) => answered.push(`${m}: ${how}`));
  p.conn.setRequestHandler(signInRequestHandler(p.conn, capture, answer));
  void p.conn.request('authenticate', { methodId: 'oauth-personal' }).catch(() => undefined);
  await tick();
  const authId = p.written[0]!.id;
  return { ...p, capture, rejected, answered, authId };
}

const answerTo = (written: ReturnType<typeof pair>['written'], id: unknown) => written.find((w) => w.id === id);

describe('elicitation/create during a sign-in', () => {
  it('initialize advertises URL elicitation (and only it)', () => {
    expect(initializeParams('1.0.0').clientCapabilities).toMatchObject({ elicitation: { url: {} } });
    expect(initializeParams('1.0.0').clientCapabilities).not.toHaveProperty('elicitation.form');
  });

  it('login: a URL tied to authenticate is captured on the elicitation channel and accepted', async () => {
    const s = await signingIn('accept');
    s.fromServer.write(
      elicit('e1', {
        mode: 'url',
        requestId: s.authId,
        elicitationId: 'el-1',
        url: GOOD,
        message: 'Sign in \x1b[31mplease\x07 code=4/0AbSecret',
      }),
    );
    const found = await s.capture.found;
    await tick();
    expect(found).toMatchObject({ source: 'elicitation', kind: 'loopback', via: 'el-1' });
    // requestId: the agent's id for its elicitation/create, which a later `$/cancel_request` names to withdraw it.
    expect(found.elicitation).toEqual({ id: 'el-1', message: 'Sign in please code=[REDACTED]', requestId: 'e1' });
    expect(answerTo(s.written, 'e1')?.result).toEqual({ action: 'accept' });
    expect(s.answered).toEqual([
      'elicitation/create: accepted: the sign-in URL is shown to the user (elicitation el-1)',
    ]);
  });

  it('probe: the same URL is recorded and answered cancel; a device page is captured as device', async () => {
    const s = await signingIn('cancel');
    s.fromServer.write(elicit(9, { mode: 'url', requestId: s.authId, elicitationId: 'd', url: DEVICE, message: 'x' }));
    expect(await s.capture.found).toMatchObject({ source: 'elicitation', kind: 'device' });
    await tick();
    expect(answerTo(s.written, 9)?.result).toEqual({ action: 'cancel' });
  });

  it('a lookalike host is declined and kept as loud evidence; nothing is captured', async () => {
    const s = await signingIn('accept');
    const bad = 'https://accounts.google.com.evil.example/o/oauth2/v2/auth?state=S&redirect_uri=x';
    s.fromServer.write(elicit(2, { mode: 'url', requestId: s.authId, elicitationId: 'b', url: bad, message: '' }));
    await tick();
    expect(answerTo(s.written, 2)?.result).toEqual({ action: 'decline' });
    expect(s.rejected).toEqual([
      expect.stringMatching(
        /^ACP URL elicitation b: .*state=\[REDACTED\].* — host accounts\.google\.com\.evil\.example/,
      ),
    ]);
    expect(s.answered[0]).toMatch(/^elicitation\/create: declined: host accounts\.google\.com\.evil\.example/);
  });

  it('a URL elicitation not tied to our authenticate is declined with a note, and not captured', async () => {
    const s = await signingIn('accept');
    s.fromServer.write(elicit(3, { mode: 'url', requestId: 12345, elicitationId: 'x', url: GOOD, message: '' }));
    s.fromServer.write(elicit(4, { mode: 'url', sessionId: 's', elicitationId: 'y', url: GOOD, message: '' }));
    await tick();
    expect(answerTo(s.written, 3)?.result).toEqual({ action: 'decline' });
    expect(answerTo(s.written, 4)?.result).toEqual({ action: 'decline' });
    expect(s.answered[0]).toMatch(/declined: a URL elicitation outside a sign-in/);
    expect(s.rejected).toEqual([]);
  });

  it('form mode (not advertised) is -32602; other requests are still -32601, both in the answered notes', async () => {
    const s = await signingIn('accept');
    s.fromServer.write(elicit(5, { mode: 'form', requestId: s.authId, message: 'name?', requestedSchema: {} }));
    s.fromServer.write(`${JSON.stringify({ jsonrpc: '2.0', id: 6, method: '_vendor/open_url', params: {} })}\n`);
    await tick();
    expect(answerTo(s.written, 5)?.error?.code).toBe(-32602);
    expect(answerTo(s.written, 6)?.error?.code).toBe(-32601);
    expect(s.answered).toEqual([
      'elicitation/create: answered error -32602 (Invalid params: unsupported elicitation mode)',
      '_vendor/open_url: answered error -32601 (Method not found)',
    ]);
  });
});

describe('elicitation/create outside a sign-in (the default handler)', () => {
  it('url is declined, form is -32602', async () => {
    const { conn, fromServer, written } = pair();
    const answered: string[] = [];
    conn.onRequestAnswered((m, how) => answered.push(`${m}: ${how}`));
    fromServer.write(elicit(1, { mode: 'url', requestId: 0, elicitationId: 'a', url: GOOD, message: '' }));
    fromServer.write(elicit(2, { mode: 'form', sessionId: 's', message: '', requestedSchema: {} }));
    await tick();
    expect(answerTo(written, 1)?.result).toEqual({ action: 'decline' });
    expect(answerTo(written, 2)?.error?.code).toBe(-32602);
    expect(answered).toContainEqual(
      expect.stringMatching(/^elicitation\/create: declined: a URL elicitation outside a sign-in/),
    );
  });
});

describe('initialize and the elicitation capability', () => {
  it('a server that refuses the elicitation capability (-32602) is asked once more without it', async () => {
    const { conn, fromServer, written } = pair();
    const answer = (id: unknown, body: Record<string, unknown>) =>
      fromServer.write(`${JSON.stringify({ jsonrpc: '2.0', id, ...body })}\n`);
    const init = initialize(conn, '1.0.0', { timeoutMs: 2_000 });
    await tick();
    const first = written[0] as { id: unknown; params: { clientCapabilities: Record<string, unknown> } };
    expect(first.params.clientCapabilities).toHaveProperty('elicitation');
    answer(first.id, { error: { code: -32602, message: 'Invalid params', data: { loc: ['clientCapabilities'] } } });
    await tick();
    const second = written[1] as { id: unknown; params: { clientCapabilities: Record<string, unknown> } };
    expect(second.params.clientCapabilities).toEqual({
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
    });
    answer(second.id, { result: { protocolVersion: 1, agentInfo: { name: 'antigravity-acp' } } });
    await expect(init).resolves.toMatchObject({ protocolVersion: 1 });
    expect(written).toHaveLength(2);
  });

  it('any other initialize error is still a server failure (exit 4), asked once', async () => {
    const { conn, fromServer, written } = pair();
    const init = initialize(conn, '1.0.0', { timeoutMs: 2_000 });
    await tick();
    fromServer.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: written[0]!.id, error: { code: -32603, message: 'boom' } })}\n`,
    );
    await expect(init).rejects.toMatchObject({ exit: 4, code: 'protocol-error' });
    expect(written).toHaveLength(1);
  });
});
