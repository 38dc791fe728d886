// authenticate with key-based methods, and the authentication state read at startup.
// Drives scripts/agy-acp-sim over stdio (docs/simulator.md); shared setup in ./helpers.ts.
import { describe, expect, it } from 'vitest';
import {
  authedSim,
  authRequired,
  GOOD_TOKEN,
  httpRequest,
  newSession,
  REVOKED,
  Sim,
  startOAuth,
  tmp,
  useSimulator,
  writeState,
} from './helpers.js';

useSimulator();

describe('authenticate: params and key-based methods', () => {
  it('requires methodId (a `method` param is -32602 with loc methodId)', async () => {
    const sim = new Sim(tmp());
    const expected = {
      code: -32602,
      message: 'Invalid params',
      data: { errors: [{ loc: ['methodId'], msg: 'field required', type: 'value_error.missing' }] },
    };
    expect((await sim.request('authenticate', { method: 'oauth-personal' })).error).toEqual(expected);
    expect((await sim.request('authenticate', {})).error).toEqual(expected);
    sim.send({ id: 77, method: 'authenticate' }); // no params at all
    expect((await sim.response(77)).error).toEqual(expected);
  });

  it('rejects an unknown methodId with a clear message', async () => {
    const sim = new Sim(tmp());
    const r = await sim.request('authenticate', { methodId: 'oauth-personnal' });
    expect(r.error.code).toBe(-32602);
    expect(JSON.stringify(r.error)).toContain("unknown authentication method 'oauth-personnal'");
  });

  it('gemini-api-key needs GEMINI_API_KEY in the server env', async () => {
    const without = new Sim(tmp());
    const r = await without.request('authenticate', { methodId: 'gemini-api-key' });
    expect(r.error.code).toBe(-32000);
    expect(JSON.stringify(r.error)).toContain('GEMINI_API_KEY');

    const home = tmp();
    const withKey = new Sim(home, { GEMINI_API_KEY: 'sim-key' });
    expect((await withKey.request('session/new', { cwd: '/x', mcpServers: [] })).error).toEqual(authRequired(home));
    expect(await withKey.result('authenticate', { methodId: 'gemini-api-key' })).toEqual({});
    await newSession(withKey);
  });

  it('agent-platform needs GOOGLE_API_KEY or a project and location', async () => {
    const none = new Sim(tmp());
    const r = await none.request('authenticate', { methodId: 'agent-platform' });
    expect(r.error.code).toBe(-32000);
    expect(JSON.stringify(r.error)).toContain('GOOGLE_API_KEY');

    const projectOnly = new Sim(tmp(), { GOOGLE_CLOUD_PROJECT: 'p' });
    expect((await projectOnly.request('authenticate', { methodId: 'agent-platform' })).error.code).toBe(-32000);

    const cases: Array<{ env: Record<string, string>; settings?: unknown }> = [
      { env: { GOOGLE_API_KEY: 'k' } },
      { env: { GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1' } },
      { env: {}, settings: { gcp: { project: 'p', location: 'europe-west4' } } },
    ];
    for (const c of cases) {
      const home = tmp();
      if (c.settings) writeState(home, { settings: c.settings });
      const sim = new Sim(home, c.env);
      expect(await sim.result('authenticate', { methodId: 'agent-platform' })).toEqual({});
      await newSession(sim);
    }
  });
});

describe('authentication at startup', () => {
  const cases: Array<{ name: string; settings?: unknown; token?: unknown; env?: Record<string, string>; ok: boolean }> =
    [
      { name: 'token without settings auth.type', token: GOOD_TOKEN, ok: false },
      { name: 'oauth-personal + token', settings: { auth: { type: 'oauth-personal' } }, token: GOOD_TOKEN, ok: true },
      { name: 'oauth-personal without token', settings: { auth: { type: 'oauth-personal' } }, ok: false },
      {
        name: 'oauth-personal + unparsable token',
        settings: { auth: { type: 'oauth-personal' } },
        token: '{"access_tok',
        ok: false,
      },
      {
        name: 'oauth-business + token, no gcp',
        settings: { auth: { type: 'oauth-business' } },
        token: GOOD_TOKEN,
        ok: false,
      },
      {
        name: 'oauth-business + token + gcp',
        settings: { auth: { type: 'oauth-business' }, gcp: { project: 'p', location: 'l' } },
        token: GOOD_TOKEN,
        ok: true,
      },
      {
        name: 'gemini-api-key + env',
        settings: { auth: { type: 'gemini-api-key' } },
        env: { GEMINI_API_KEY: 'k' },
        ok: true,
      },
      { name: 'gemini-api-key without env', settings: { auth: { type: 'gemini-api-key' } }, ok: false },
      {
        name: 'agent-platform + GOOGLE_API_KEY',
        settings: { auth: { type: 'agent-platform' } },
        env: { GOOGLE_API_KEY: 'k' },
        ok: true,
      },
      {
        name: 'legacy vertex-ai + env project/location',
        settings: { auth: { type: 'vertex-ai' } },
        env: { GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'l' },
        ok: true,
      },
      {
        name: 'agent-platform + settings gcp',
        settings: { auth: { type: 'agent-platform' }, gcp: { project: 'p', location: 'l' } },
        ok: true,
      },
      { name: 'agent-platform with nothing', settings: { auth: { type: 'agent-platform' } }, ok: false },
    ];

  it.each(cases)('$name → authenticated: $ok', async (c) => {
    const home = tmp();
    writeState(home, { settings: c.settings, token: c.token });
    const sim = new Sim(home, c.env ?? {});
    const r = await sim.request('session/new', { cwd: '/w', mcpServers: [] });
    if (c.ok) expect(r.result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    else expect(r.error).toEqual(authRequired(home));
  });

  it('reads settings.json only at startup', async () => {
    const home = tmp();
    const sim = new Sim(home);
    await sim.request('initialize', { protocolVersion: 1 });
    writeState(home, { settings: { auth: { type: 'oauth-personal' } }, token: GOOD_TOKEN });
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
    // A restart picks it up.
    const again = new Sim(home);
    await newSession(again);
  });

  it('AGY_SIM_TOKEN_STATE=revoked fails session/new with invalid_grant until a new login', async () => {
    const sim = await authedSim({ AGY_SIM_TOKEN_STATE: 'revoked', AGY_SIM_LAUNCH: 'stdout' });
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(REVOKED);
    const { id, parsed } = await startOAuth(sim);
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    await newSession(sim);
  });

  it('a token with "sim_revoked": true is revoked too', async () => {
    const home = tmp();
    writeState(home, { settings: { auth: { type: 'oauth-personal' } }, token: { ...GOOD_TOKEN, sim_revoked: true } });
    const sim = new Sim(home);
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(REVOKED);
  });
});
