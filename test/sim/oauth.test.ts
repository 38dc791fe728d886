// The OAuth loopback flow and how the sign-in URL is delivered (AGY_SIM_LAUNCH).
// Drives scripts/agy-acp-sim over stdio (docs/simulator.md); shared setup in ./helpers.ts.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import {
  authRequired,
  capturingScript,
  freePort,
  httpRequest,
  newSession,
  ONBOARDING_FAILED,
  ONBOARDING_TIMED_OUT,
  type ParsedUrl,
  parseAuthUrl,
  Sim,
  sleep,
  startOAuth,
  stateDir,
  tcpProbe,
  tmp,
  URL_PREFIX,
  useSimulator,
  waitRefused,
  writeState,
} from './helpers.js';

useSimulator();

describe('OAuth loopback flow', () => {
  it('builds the RC01 URL, survives a bare TCP probe, completes on a good callback', async () => {
    const home = tmp();
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout' });
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
    const { id, url, parsed } = await startOAuth(sim);
    expect(parsed.path).toBe('/');
    expect(url).toContain(`redirect_uri=http%3A%2F%2F127.0.0.1%3A${parsed.port}%2F&`);

    // Bare connect+close is not a request: the flow goes on.
    expect(await tcpProbe(parsed.port)).toBe('open');
    await sleep(150);
    expect(sim.hasResponse(id)).toBe(false);
    expect(await tcpProbe(parsed.port)).toBe('open');

    const code = 'SIMCODE-4/0AX4XfWh-do-not-print';
    const page = await httpRequest(
      `http://127.0.0.1:${parsed.port}/?code=${encodeURIComponent(code)}&state=${parsed.state}&scope=x`,
    );
    expect(page.status).toBe(200);
    expect(page.body).toContain('Authentication successful');
    expect((await sim.response(id)).result).toEqual({});
    await waitRefused(parsed.port);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');

    const tokenPath = join(stateDir(home), 'acp_token.json');
    const st = statSync(tokenPath);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.size).toBeGreaterThan(400);
    expect(st.size).toBeLessThan(650);
    const token = JSON.parse(readFileSync(tokenPath, 'utf8'));
    expect(token.access_token).toMatch(/^ya29\.sim-/);
    expect(token.refresh_token).toMatch(/^1\/\/sim-/);
    expect(token.token_type).toBe('Bearer');
    expect(token.scope).toBe(
      'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/aicode',
    );
    expect(Math.abs(token.expiry_date - (Date.now() + 3600_000))).toBeLessThan(60_000);
    expect(readdirSync(stateDir(home)).filter((f) => f.includes('.tmp'))).toEqual([]);

    await newSession(sim);
    // Neither the code nor the token ever leaves the process.
    for (const secret of [code, token.access_token, token.refresh_token, 'SIMCODE']) {
      expect(sim.stdout).not.toContain(secret);
      expect(sim.stderr).not.toContain(secret);
    }
  });

  it('oauth-personal without AGY_SIM_AUTH_WRITES_SETTINGS leaves settings.json alone', async () => {
    const home = tmp();
    const settings = { auth: { type: 'gemini-api-key' }, ui: { theme: 'dark' } };
    writeState(home, { settings });
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout' });
    const { id, parsed } = await startOAuth(sim);
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    expect(JSON.parse(readFileSync(join(stateDir(home), 'settings.json'), 'utf8'))).toEqual(settings);
  });

  it('AGY_SIM_AUTH_WRITES_SETTINGS=1: an oauth-personal login rewrites auth.type', async () => {
    const home = tmp();
    writeState(home, { settings: { auth: { type: 'oauth-business' }, gcp: { project: 'p', location: 'l' } } });
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_AUTH_WRITES_SETTINGS: '1' });
    const { id, parsed } = await startOAuth(sim);
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    expect(JSON.parse(readFileSync(join(stateDir(home), 'settings.json'), 'utf8'))).toEqual({
      auth: { type: 'oauth-personal' },
      gcp: { project: 'p', location: 'l' },
    });
  });

  it('oauth-business needs gcp.project/location in settings', async () => {
    const bare = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout' });
    const r = await bare.request('authenticate', { methodId: 'oauth-business' });
    expect(r.error.code).toBe(-32000);
    expect(JSON.stringify(r.error)).toContain('gcp.project');
    expect(bare.rawLines.some((l) => l.startsWith(URL_PREFIX))).toBe(false);

    const home = tmp();
    writeState(home, { settings: { auth: { type: 'oauth-business' }, gcp: { project: 'p', location: 'l' } } });
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout' });
    const { id, parsed } = await startOAuth(sim, 'oauth-business');
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    await newSession(sim);
  });

  const failures: Array<{ name: string; url: (p: ParsedUrl) => string }> = [
    { name: 'GET / without code', url: (p) => `http://127.0.0.1:${p.port}/` },
    { name: 'wrong state', url: (p) => `http://127.0.0.1:${p.port}/oauth2callback?code=c&state=${'0'.repeat(32)}` },
    {
      name: 'error=access_denied',
      url: (p) => `http://127.0.0.1:${p.port}/oauth2callback?error=access_denied&state=${p.state}`,
    },
    { name: 'wrong path', url: (p) => `http://127.0.0.1:${p.port}/callback?code=c&state=${p.state}` },
  ];

  it.each(failures)('a callback with $name fails the flow (callback path /oauth2callback)', async (f) => {
    const home = tmp();
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CALLBACK_PATH: '/oauth2callback' });
    const { id, url, parsed } = await startOAuth(sim);
    expect(parsed.path).toBe('/oauth2callback');
    expect(url).toContain(`%3A${parsed.port}%2Foauth2callback&scope=`);
    const page = await httpRequest(f.url(parsed));
    expect(page.body).toContain('Authentication failed');
    expect((await sim.response(id)).error).toEqual(ONBOARDING_FAILED);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
    expect(existsSync(join(stateDir(home), 'acp_token.json'))).toBe(false);
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
  });

  it('the good callback on /oauth2callback succeeds', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CALLBACK_PATH: '/oauth2callback' });
    const { id, parsed } = await startOAuth(sim);
    const page = await httpRequest(`http://127.0.0.1:${parsed.port}/oauth2callback?state=${parsed.state}&code=abc`);
    expect(page.body).toContain('Authentication successful');
    expect((await sim.response(id)).result).toEqual({});
  });

  it('AGY_SIM_ONBOARD_TIMEOUT_MS ends the flow with the RC01 timeout error', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_ONBOARD_TIMEOUT_MS: '300' });
    const { id, parsed } = await startOAuth(sim);
    expect(await tcpProbe(parsed.port)).toBe('open');
    expect((await sim.response(id)).error).toEqual(ONBOARDING_TIMED_OUT);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
  });

  it('AGY_SIM_CALLBACK_PORT pins the listener port', async () => {
    const port = await freePort();
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CALLBACK_PORT: String(port) });
    const { parsed } = await startOAuth(sim);
    expect(parsed.port).toBe(port);
    expect(await tcpProbe(port)).toBe('open');
  });

  it('AGY_SIM_CRASH_WHILE_WAITING_MS kills the server mid-login with exit 70', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CRASH_WHILE_WAITING_MS: '200' });
    const { id, parsed } = await startOAuth(sim);
    expect((await sim.exited).code).toBe(70);
    expect(sim.stderr).toContain('FATAL: simulated crash');
    expect(sim.hasResponse(id)).toBe(false);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
  });

  it('AGY_SIM_DROP_LISTENER_MS closes the listener but keeps authenticate pending', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_DROP_LISTENER_MS: '150' });
    const { id, parsed } = await startOAuth(sim);
    await waitRefused(parsed.port);
    await sleep(200);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
    expect(sim.exit).toBeUndefined();
    expect(sim.hasResponse(id)).toBe(false);
    expect((await sim.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    expect(sim.hasResponse(id)).toBe(false);
  });

  it('refuses a second OAuth authenticate while one is pending', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout' });
    const { id, parsed } = await startOAuth(sim);
    const second = await sim.request('authenticate', { methodId: 'oauth-personal' });
    expect(second.error.code).toBe(-32000);
    expect(await tcpProbe(parsed.port)).toBe('open');
    expect(sim.hasResponse(id)).toBe(false);
  });
});

describe('URL delivery (AGY_SIM_LAUNCH)', () => {
  function launchEnv(withBrowser: boolean): {
    dir: string;
    browserLog: string;
    xdgLog: string;
    env: Record<string, string>;
  } {
    const dir = tmp('agy-sim-bin-');
    const browserLog = join(dir, 'browser.log');
    const xdgLog = join(dir, 'xdg.log');
    const browser = capturingScript(dir, 'fake-browser', browserLog);
    capturingScript(dir, 'xdg-open', xdgLog);
    const env: Record<string, string> = { PATH: `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}` };
    if (withBrowser) env.BROWSER = browser;
    return { dir, browserLog, xdgLog, env };
  }

  function readLaunch(log: string): Promise<string> {
    return until(`${log}`, 5_000, () => (existsSync(log) ? readFileSync(log, 'utf8').trim() || undefined : undefined));
  }

  it('default: runs $BROWSER with the URL as its only argument, prints nothing', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'default' });
    const id = sim.start('authenticate', { methodId: 'oauth-personal' });
    const [argc, url] = (await readLaunch(l.browserLog)).split('|');
    expect(argc).toBe('1');
    const parsed = parseAuthUrl(url!);
    expect(existsSync(l.xdgLog)).toBe(false);
    expect(sim.stdout).toBe('');
    expect(sim.stderr).toBe('');
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
  });

  it('default without BROWSER: runs xdg-open from PATH', async () => {
    const l = launchEnv(false);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'default' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    const [argc, url] = (await readLaunch(l.xdgLog)).split('|');
    expect(argc).toBe('1');
    parseAuthUrl(url!);
    expect(sim.stdout + sim.stderr).toBe('');
  });

  it('xdg-only: ignores BROWSER', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'xdg-only' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    parseAuthUrl((await readLaunch(l.xdgLog)).split('|')[1]!);
    await sleep(200);
    expect(existsSync(l.browserLog)).toBe(false);
  });

  it('display-only: launches nothing and prints nothing without a display', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'display-only' });
    const id = sim.start('authenticate', { methodId: 'oauth-personal' });
    await sleep(500);
    expect(existsSync(l.browserLog)).toBe(false);
    expect(existsSync(l.xdgLog)).toBe(false);
    expect(sim.stdout + sim.stderr).toBe('');
    expect(sim.hasResponse(id)).toBe(false);
  });

  it.each(['DISPLAY', 'WAYLAND_DISPLAY'])('display-only: launches like default when %s is set', async (v) => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'display-only', [v]: ':0' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    parseAuthUrl((await readLaunch(l.browserLog)).split('|')[1]!);
  });

  it('stderr: prints the URL line on stderr only', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'stderr' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    const line = await until('stderr URL', 5_000, () => sim.stderr.split('\n').find((x) => x.startsWith(URL_PREFIX)));
    parseAuthUrl(line.slice(URL_PREFIX.length));
    expect(sim.stdout).toBe('');
    expect(existsSync(l.browserLog)).toBe(false);
  });

  it('stdout: prints the URL line on the JSON-RPC channel, launches nothing', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'stdout' });
    await startOAuth(sim);
    await sleep(100);
    expect(existsSync(l.browserLog)).toBe(false);
    expect(existsSync(l.xdgLog)).toBe(false);
  });

  it('none: launches and prints nothing', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'none' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    await sleep(400);
    expect(existsSync(l.browserLog)).toBe(false);
    expect(existsSync(l.xdgLog)).toBe(false);
    expect(sim.stdout + sim.stderr).toBe('');
  });
});
