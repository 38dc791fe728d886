// connect's relay listener on the laptop: only this login's callback (GET,
// Host 127.0.0.1:<port>, path, state, a code) is handed to `deliver`, once;
// everything else is answered here and goes nowhere; the page never echoes
// the code; the listener closes after the delivery or on close().
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CallbackRelay, type CallbackRelayOptions, type Delivery } from '../../src/connect/callback-relay.js';
import type { AuthUrl } from '../../src/profiles/auth-url.js';

const STATE = 'state-of-this-login';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

function request(
  port: number,
  target: string,
  o: { method?: string; host?: string } = {},
): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: target,
        method: o.method ?? 'GET',
        agent: false,
        headers: { host: o.host ?? `127.0.0.1:${port}` },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

const relays: CallbackRelay[] = [];
afterEach(async () => {
  for (const r of relays.splice(0)) await r.close();
});

async function start(
  answer: (address: string) => Delivery = () => ({ ok: true, status: 200 }),
  path = '/',
): Promise<{ port: number; delivered: string[]; refused: string[]; relay: CallbackRelay }> {
  const port = await freePort();
  const delivered: string[] = [];
  const refused: string[] = [];
  const auth: AuthUrl = {
    url: 'https://accounts.google.com/o/oauth2/v2/auth',
    port,
    redirectUri: `http://127.0.0.1:${port}${path}`,
    redirectPath: path,
    state: STATE,
  };
  const options: CallbackRelayOptions = {
    auth,
    destination: 'me@box',
    deliver: (address) => {
      delivered.push(address);
      return Promise.resolve(answer(address));
    },
    onRefused: (reason) => void refused.push(reason),
  };
  const relay = await CallbackRelay.listen(options);
  if ('error' in relay) throw new Error(relay.error);
  relays.push(relay);
  return { port, delivered, refused, relay };
}

describe('CallbackRelay', () => {
  it('hands the one callback of this login to deliver, answers the browser, then stops listening', async () => {
    const { port, delivered, refused } = await start(undefined, '/oauth2callback');
    const r = await request(port, `/oauth2callback?state=${STATE}&code=secret-code&scope=x`);
    expect(r).toMatchObject({ status: 200, body: expect.stringMatching(/Sign-in went through.*me@box/s) });
    expect((r as { body: string }).body).not.toContain('secret-code');
    expect(delivered).toEqual([`http://127.0.0.1:${port}/oauth2callback?state=${STATE}&code=secret-code&scope=x`]);
    expect(refused).toEqual([]);
    await expect
      .poll(async () => request(port, `/oauth2callback?state=${STATE}&code=again`))
      .toEqual({
        error: 'ECONNREFUSED',
      });
    expect(delivered).toHaveLength(1);
  });

  it.for([
    ['another path', `/other?code=c&state=${STATE}`, {}, /path \/other is not \//],
    ['another state', '/?code=c&state=older-login', {}, /state does not match/],
    ['no code', `/?state=${STATE}`, {}, /no code/],
    ['GET / (which would end the server flow)', '/', {}, /no code/],
    ['an error from Google', `/?error=access_denied&state=${STATE}`, {}, /access_denied/],
    ['a POST', `/?code=c&state=${STATE}`, { method: 'POST' }, /method POST is not GET/],
    ['another Host header', `/?code=c&state=${STATE}`, { host: 'rebind.example:80' }, /Host header/],
  ] as const)('answers %s itself with an error page and relays nothing', async ([, target, o, reason]) => {
    const { port, delivered, refused } = await start();
    const r = await request(port, target, o);
    expect(r).toMatchObject({ status: 400, body: expect.stringMatching(/Not relayed/) });
    expect(refused).toEqual([expect.stringMatching(reason)]);
    expect(delivered).toEqual([]);
    // Still listening for the real redirect.
    expect(await request(port, `/?code=c&state=${STATE}`)).toMatchObject({ status: 200 });
  });

  it('escapes what the request put in the reason before it goes on the page', async () => {
    const { port } = await start();
    const r = await request(port, `/?error=%3Cscript%3Ealert(1)%3C%2Fscript%3E&state=${STATE}`);
    expect(r).toMatchObject({ status: 400 });
    expect((r as { body: string }).body).not.toContain('<script>');
    expect((r as { body: string }).body).toContain('&lt;script&gt;');
  });

  it("shows the remote login's refusal and keeps listening for a retry", async () => {
    let first = true;
    const { port, delivered } = await start(() => {
      if (!first) return { ok: true, status: 200 };
      first = false;
      return { ok: false, reason: 'could not reach the login listener' };
    });
    expect(await request(port, `/?code=c&state=${STATE}`)).toMatchObject({
      status: 502,
      body: expect.stringMatching(/did not take this address: could not reach the login listener/),
    });
    expect(await request(port, `/?code=c&state=${STATE}`)).toMatchObject({ status: 200 });
    expect(delivered).toHaveLength(2);
  });

  it("passes on the server listener's error status, and stops: the redirect was delivered once", async () => {
    const { port, delivered } = await start(() => ({ ok: true, status: 400 }));
    expect(await request(port, `/?code=c&state=${STATE}`)).toMatchObject({
      status: 502,
      body: expect.stringMatching(/answered the redirect with HTTP 400/),
    });
    await expect.poll(async () => request(port, `/?code=c&state=${STATE}`)).toEqual({ error: 'ECONNREFUSED' });
    expect(delivered).toHaveLength(1);
  });

  it('close() frees the port', async () => {
    const { port, relay } = await start();
    await relay.close();
    expect(await request(port, `/?code=c&state=${STATE}`)).toEqual({ error: 'ECONNREFUSED' });
  });

  it('reports a port taken since it was checked as an error, not a throw', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const r = await CallbackRelay.listen({
        auth: { url: '', port, redirectUri: '', redirectPath: '/', state: STATE },
        destination: 'box',
        deliver: () => Promise.resolve({ ok: true }),
        onRefused: () => undefined,
      });
      expect(r).toEqual({ error: expect.stringMatching(/EADDRINUSE/) });
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});
