// ACP URL elicitation (AGY_SIM_ELICITATION, docs/simulator.md): the sim asks a client that advertised
// clientCapabilities.elicitation.url, ties the request to the authenticate by requestId, cancels its sign-in
// on any answer but accept, and sends elicitation/complete before the authenticate answer.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import { httpRequest, type Msg, parseAuthUrl, Sim, stateDir, tmp, useSimulator } from './helpers.js';

useSimulator();

const ELICITING = { protocolVersion: 1, clientCapabilities: { elicitation: { url: {} } } };

async function elicitation(sim: Sim): Promise<Msg & { id: number; params: Record<string, unknown> }> {
  return (await until('elicitation/create', 5_000, () =>
    sim.messages.find((m) => m.method === 'elicitation/create'),
  )) as Msg & { id: number; params: Record<string, unknown> };
}

describe('AGY_SIM_ELICITATION', () => {
  it('only: the URL comes as elicitation/create tied to authenticate; accept, the callback, complete, then {}', async () => {
    const home = tmp();
    const sim = new Sim(home, { AGY_SIM_ELICITATION: 'only' });
    await sim.request('initialize', ELICITING);
    const auth = sim.start('authenticate', { methodId: 'oauth-personal' });
    const el = await elicitation(sim);
    expect(el.params).toMatchObject({
      mode: 'url',
      requestId: auth,
      elicitationId: expect.stringMatching(/^agy-sim-signin-[0-9a-f]{8}$/),
      message: 'Sign in with your Google account to use Antigravity.',
    });
    sim.send({ id: el.id, result: { action: 'accept' } });
    const parsed = parseAuthUrl(String(el.params.url));
    const page = await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect(page.status).toBe(200);
    expect((await sim.response(auth)).result).toEqual({});
    const complete = sim.messages.findIndex((m) => m.method === 'elicitation/complete');
    expect(sim.messages[complete]?.params).toEqual({ elicitationId: el.params.elicitationId });
    expect(complete).toBeLessThan(sim.messages.findIndex((m) => m.id === auth && 'result' in m));
    expect(existsSync(join(stateDir(home), 'acp_token.json'))).toBe(true);
  });

  it.each([
    ['decline', { result: { action: 'decline' } }, 'decline'],
    ['cancel', { result: { action: 'cancel' } }, 'cancel'],
    ['-32601 (an old client)', { error: { code: -32601, message: 'Method not found' } }, 'error -32601'],
  ])('only: an answer of %s cancels the sign-in', async (_what, answer, words) => {
    const sim = new Sim(tmp(), { AGY_SIM_ELICITATION: 'only' });
    await sim.request('initialize', ELICITING);
    const auth = sim.start('authenticate', { methodId: 'oauth-personal' });
    sim.send({ id: (await elicitation(sim)).id, ...answer });
    expect((await sim.response(auth)).error).toEqual({
      code: -32000,
      message: 'Authentication failed',
      data: { message: `Sign-in cancelled: the client answered the sign-in page with ${words}.` },
    });
  });

  it('only, to a client that did not advertise the capability: authenticate fails at once, no request', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_ELICITATION: 'only' });
    await sim.request('initialize', { protocolVersion: 1 });
    const r = await sim.request('authenticate', { methodId: 'oauth-personal' });
    expect((r.error as { data: { message: string } }).data.message).toMatch(/clientCapabilities\.elicitation\.url/);
    expect(sim.messages.some((m) => m.method === 'elicitation/create')).toBe(false);
  });

  it('device page: www.google.com/device, no listener; accepted, the sim finishes it itself', async () => {
    const home = tmp();
    const sim = new Sim(home, {
      AGY_SIM_ELICITATION: 'only',
      AGY_SIM_ELICITATION_PAGE: 'device',
      AGY_SIM_DEVICE_APPROVE_MS: '50',
    });
    await sim.request('initialize', ELICITING);
    const auth = sim.start('authenticate', { methodId: 'oauth-personal' });
    const el = await elicitation(sim);
    expect(String(el.params.url)).toMatch(/^https:\/\/www\.google\.com\/device\?user_code=[0-9A-F]{4}-[0-9A-F]{4}$/);
    sim.send({ id: el.id, result: { action: 'accept' } });
    expect((await sim.response(auth)).result).toEqual({});
    expect(existsSync(join(stateDir(home), 'acp_token.json'))).toBe(true);
  });
});
