/**
 * agyctl login against the simulator, end to end on the built binary. The
 * test plays the user's browser and Google: it takes the URL agyctl prints
 * and requests the redirect_uri with a code and the right state.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { FAKE_CODE, httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import {
  agyctl,
  BIN,
  makeSandbox,
  parseEvents,
  type Sandbox,
  spawnAgyctl,
  waitNoProcesses,
  writeSettings,
} from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

const shimDirsLeft = (sb: Sandbox): string[] => fs.readdirSync(sb.root).filter((f) => f.startsWith('agyctl-login-'));
const conversationsLeft = (sb: Sandbox): string[] => {
  try {
    return fs.readdirSync(path.join(sb.stateDir, 'conversations'));
  } catch {
    return [];
  }
};

async function loginWithBrowser(sb: Sandbox, env: NodeJS.ProcessEnv = {}, extraArgs: string[] = []) {
  const child = spawnAgyctl(['login', '--json', '--timeout', '30s', ...extraArgs], sb, { env });
  const url = await waitForEvent(child, 'url');
  expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
  const result = await child;
  return { url, result, events: parseEvents(String(result.stdout)) };
}

describe('login: URL capture on every launch behaviour', () => {
  const behaviours: Array<[string, NodeJS.ProcessEnv]> = [
    ['BROWSER, then xdg-open (RC01)', { AGY_SIM_LAUNCH: 'default' }],
    ['only xdg-open', { AGY_SIM_LAUNCH: 'xdg-only' }],
    [
      'only with DISPLAY set',
      { AGY_SIM_LAUNCH: 'display-only', CI: 'true', NO_BROWSER: '1', DEBIAN_FRONTEND: 'noninteractive' },
    ],
    ['URL printed on stdout', { AGY_SIM_LAUNCH: 'stdout' }],
    ['URL printed on stderr', { AGY_SIM_LAUNCH: 'stderr' }],
    ['ANSI escapes and garbage on stdout', { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_NOISE: 'both' }],
  ];

  it.each(behaviours)(
    '%s: same url event, exit 0, token 0600, probe session removed, nothing left',
    async (_name, env) => {
      sandbox = makeSandbox();
      const { url, result, events } = await loginWithBrowser(sandbox, env);
      expect(result.exitCode, String(result.stderr)).toBe(0);
      expect(url.url).toMatch(/^https:\/\/accounts\.google\.com\/o\/oauth2\/v2\/auth\?/);
      expect(url.port).toBeGreaterThan(0);
      expect(url.redirectUri).toBe(`http://127.0.0.1:${String(url.port)}/`);
      expect(url.tunnel).toBe(
        `ssh -N -L ${String(url.port)}:127.0.0.1:${String(url.port)} -o ExitOnForwardFailure=yes -- ${String(url.tunnel).split(' ').pop()}`,
      );
      expect(events.map((e) => e.event)).toEqual(
        expect.arrayContaining(['server-started', 'url', 'authenticated', 'verified']),
      );
      expect(events.at(-1)).toMatchObject({
        event: 'verified',
        tokenFile: { mode: '0600' },
        sessionProbe: { removed: true },
      });
      expect(fs.statSync(path.join(sandbox.stateDir, 'acp_token.json')).mode & 0o777).toBe(0o600);
      expect(JSON.parse(fs.readFileSync(path.join(sandbox.stateDir, 'settings.json'), 'utf8'))).toEqual({
        auth: { type: 'oauth-personal' },
      });
      expect(conversationsLeft(sandbox)).toEqual([]);
      expect(shimDirsLeft(sandbox)).toEqual([]);
      expect(await waitNoProcesses(sandbox)).toEqual([]);
    },
  );

  it('the callback path is taken from redirect_uri (/oauth2callback)', async () => {
    sandbox = makeSandbox();
    const { url, result } = await loginWithBrowser(sandbox, { AGY_SIM_CALLBACK_PATH: '/oauth2callback' });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(url.redirectUri).toMatch(/\/oauth2callback$/);
  });

  it('human mode prints the URL and the tunnel command each alone on a stdout line', async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '--timeout', '30s', '--ssh-target', 'ops@box.example.com:2222'], sandbox);
    let out = '';
    const urlLine = await new Promise<string>((resolve) => {
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const line = out.split('\n').find((l) => l.startsWith('https://'));
        if (line && out.includes('ssh -N')) resolve(line);
      });
    });
    await httpGet(redirectFor(urlLine));
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const lines = String(result.stdout).split('\n');
    const port = new URL(new URL(urlLine).searchParams.get('redirect_uri')!).port;
    expect(lines[0]).toBe(urlLine);
    expect(lines[1]).toBe(
      `ssh -N -L ${port}:127.0.0.1:${port} -o ExitOnForwardFailure=yes -p 2222 -- ops@box.example.com`,
    );
    expect(String(result.stderr)).toContain(`Port ${port} must be free on your laptop`);
  });
});

describe('login: --qr and --open', () => {
  it('--qr with --json draws no QR code (one note on stderr); --open without a display says so and carries on', async () => {
    sandbox = makeSandbox();
    const { result } = await loginWithBrowser(sandbox, { DISPLAY: '', WAYLAND_DISPLAY: '' }, ['--qr', '--open']);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const stderr = String(result.stderr);
    expect(stderr.split('\n').filter((l) => /^[█▀▄ ]{20,}$/.test(l))).toEqual([]);
    expect(stderr).toContain('QR code left out: --json prints no QR code.');
    expect(stderr).toContain('--open: no display here');
    expect(() => parseEvents(String(result.stdout))).not.toThrow();
  });

  it('--qr piped (no terminal to fit): the code is drawn on stderr, never on stdout', async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '--qr', '--timeout', '30s'], sandbox);
    const urlLine = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const line = out.split('\n').find((l) => l.startsWith('https://'));
        if (line && out.includes('ssh -N')) resolve(line);
      });
    });
    expect(await httpGet(redirectFor(urlLine))).toBe(200);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    // qrcode-terminal's small mode draws with half blocks; a QR of a ~500-character URL is dozens of rows.
    expect(
      String(result.stderr)
        .split('\n')
        .filter((l) => /^[█▀▄ ]{40,}$/.test(l)).length,
    ).toBeGreaterThan(20);
    expect(String(result.stdout)).not.toMatch(/[█▀▄]/);
  });
});

describe('login: paste-back', () => {
  it('rejects wrong state, wrong port and a missing code, then succeeds with the right redirect', async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '--json', '--timeout', '30s'], sandbox);
    const url = String((await waitForEvent(child, 'url')).url);
    const port = Number(new URL(new URL(url).searchParams.get('redirect_uri')!).port);
    child.stdin!.write(`${redirectFor(url, { state: 'not-the-state' })}\n`);
    child.stdin!.write(`${redirectFor(url, { port: port === 65535 ? 1 : port + 1 })}\n`);
    child.stdin!.write(`${redirectFor(url, { code: null })}\n`);
    child.stdin!.write('hello\n');
    child.stdin!.write(`  "${redirectFor(url)}"  \n`);
    const result = await child;
    const events = parseEvents(String(result.stdout));
    const rejected = events.filter((e) => e.event === 'redirect-rejected').map((e) => String(e.reason));
    expect(rejected).toHaveLength(4);
    expect(rejected[0]).toMatch(/state/);
    expect(rejected[1]).toMatch(/port/);
    expect(rejected[2]).toMatch(/no code/);
    expect(rejected[3]).toMatch(/not a URL|host/);
    expect(events.some((e) => e.event === 'redirect-delivered')).toBe(true);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stdout) + String(result.stderr)).not.toContain(FAKE_CODE);
  });
});

describe('login: failures leave nothing behind', () => {
  async function expectClean(sb: Sandbox): Promise<void> {
    expect(await waitNoProcesses(sb)).toEqual([]);
    expect(shimDirsLeft(sb)).toEqual([]);
  }

  it('a stray GET / aborts the flow: exit 3 with the server message', async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '--json', '--timeout', '30s'], sandbox);
    const url = await waitForEvent(child, 'url');
    await httpGet(`http://127.0.0.1:${String(url.port)}/`);
    const result = await child;
    expect(result.exitCode).toBe(3);
    expect(parseEvents(String(result.stdout)).at(-1)).toMatchObject({ event: 'error', code: 'auth-failed', exit: 3 });
    expect(String(result.stdout)).toContain('did not complete successfully');
    await expectClean(sandbox);
  });

  it('the deadline: exit 5 with a hint', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['login', '--timeout', '2s'], sandbox);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toMatch(/No sign-in within 2s/);
    expect(result.stderr).toMatch(/--timeout/);
    await expectClean(sandbox);
  });

  it('the server crashing while waiting: exit 4 at once, with its stderr', async () => {
    sandbox = makeSandbox({ AGY_SIM_CRASH_WHILE_WAITING_MS: '1500' });
    const child = spawnAgyctl(['login', '--json', '--timeout', '60s'], sandbox);
    await waitForEvent(child, 'url');
    const crashAt = Date.now() + 1500;
    const result = await child;
    expect(result.exitCode).toBe(4);
    // Noticed at once (the pipe closes), long before the 60 s deadline; no tight timing on a loaded CI box.
    expect(Date.now() - crashAt).toBeLessThan(8000);
    expect(String(result.stdout)).toContain('simulated crash');
    await expectClean(sandbox);
  });

  it('the listener disappearing while the server lives: exit 4 long before the deadline', async () => {
    sandbox = makeSandbox({ AGY_SIM_DROP_LISTENER_MS: '1000' });
    const child = spawnAgyctl(['login', '--json', '--timeout', '60s'], sandbox);
    await waitForEvent(child, 'url');
    const dropAt = Date.now() + 1000;
    const result = await child;
    expect(result.exitCode).toBe(4);
    // The 2 s budget itself is measured in login-listener-watch.test.ts; here: long before the deadline.
    expect(Date.now() - dropAt).toBeLessThan(8000);
    expect(parseEvents(String(result.stdout)).at(-1)).toMatchObject({ event: 'error', code: 'listener-gone' });
    await expectClean(sandbox);
  });

  it('the sign-in window closing on the server side: exit 3 with the timeout message', async () => {
    sandbox = makeSandbox({ AGY_SIM_ONBOARD_TIMEOUT_MS: '1500' });
    const result = await agyctl(['login', '--timeout', '30s'], sandbox);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('Timed out waiting for the authentication flow to complete');
    await expectClean(sandbox);
  });

  it('Ctrl-C: exit 130, server group killed, shims removed', async () => {
    sandbox = makeSandbox({ AGY_SIM_IGNORE_SIGTERM: '1' });
    const child = spawnAgyctl(['login', '--json', '--timeout', '60s'], sandbox);
    await waitForEvent(child, 'url');
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    await expectClean(sandbox);
  });

  it('a server that exits at start: exit 4 with the tail of its stderr', async () => {
    sandbox = makeSandbox({ AGY_SIM_EXIT_AT_START: '3' });
    const result = await agyctl(['login'], sandbox);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('simulated startup failure');
    await expectClean(sandbox);
  });

  it('a malformed settings.json is refused before anything starts (exit 2, line and column)', async () => {
    sandbox = makeSandbox();
    const file = writeSettings(sandbox, '{"auth": {"type": "oauth-personal",}}');
    const before = fs.readFileSync(file);
    const result = await agyctl(['login'], sandbox);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/line 1 column \d+/);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('no URL ever shown (a DISPLAY-only build with --no-fake-display): the deadline says so', async () => {
    sandbox = makeSandbox({ AGY_SIM_LAUNCH: 'display-only' });
    const result = await agyctl(['login', '--no-fake-display', '--timeout', '2s'], sandbox, { env: { DISPLAY: '' } });
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toMatch(/sign-in URL/);
    await expectClean(sandbox);
  });
});

describe('login: secrets never leak', () => {
  it('neither the auth code nor the token appears in output or the --trace file', async () => {
    sandbox = makeSandbox();
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const { result } = await loginWithBrowser(sandbox, {}, ['--trace', trace, '--verbose']);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const token = JSON.parse(fs.readFileSync(path.join(sandbox.stateDir, 'acp_token.json'), 'utf8')) as Record<
      string,
      string
    >;
    const everything = String(result.stdout) + String(result.stderr) + fs.readFileSync(trace, 'utf8');
    expect(everything).not.toContain(FAKE_CODE);
    for (const secret of [token.access_token, token.refresh_token]) expect(everything).not.toContain(secret);
    const url = parseEvents(String(result.stdout)).find((e) => e.event === 'url')!;
    const state = new URL(String(url.url)).searchParams.get('state')!;
    expect(fs.readFileSync(trace, 'utf8')).not.toContain(state);
    expect(fs.readFileSync(trace, 'utf8')).toContain('"dir":"send"');
  });
});

describe('login: settings and other methods', () => {
  it('reports a server that rewrote settings.json, and leaves a different auth.type alone with a warning', async () => {
    sandbox = makeSandbox({ AGY_SIM_AUTH_WRITES_SETTINGS: '1' });
    writeSettings(sandbox, { auth: { type: 'gemini-api-key' }, theme: 'dark' });
    const { result, events } = await loginWithBrowser(sandbox, {}, ['--method', 'oauth-personal']);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.find((e) => e.event === 'settings-changed')).toMatchObject({
      by: 'server',
      authTypeBefore: 'gemini-api-key',
      authTypeAfter: 'oauth-personal',
    });
  });

  it('gemini-api-key: authenticate without a browser, then the proof', async () => {
    sandbox = makeSandbox({ GEMINI_API_KEY: 'AIzaFAKEFAKEFAKEFAKEFAKEFAKE' });
    const result = await agyctl(['login', '--method', 'gemini-api-key', '--json'], sandbox);
    expect(result.exitCode, result.stderr).toBe(0);
    const events = parseEvents(result.stdout);
    expect(events.some((e) => e.event === 'url')).toBe(false);
    expect(events.at(-1)).toMatchObject({ event: 'verified' });
    expect(result.stdout + result.stderr).not.toContain('AIzaFAKE');
  });

  it('gemini-api-key without the key: exit 3 with the server message', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['login', '--method', 'gemini-api-key'], sandbox);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('GEMINI_API_KEY');
  });

  it('an unknown method: exit 2 listing what the server offers', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['login', '--method', 'carrier-pigeon'], sandbox);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('oauth-personal');
  });
});

describe('logout', () => {
  it('logs out through the server and confirms; a second logout still exits 0', async () => {
    sandbox = makeSandbox();
    expect((await loginWithBrowser(sandbox)).result.exitCode).toBe(0);
    const out = await agyctl(['logout', '--json'], sandbox);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({
      schemaVersion: 1,
      ok: true,
      logout: { via: 'server', tokenRemoved: true, alreadyLoggedOut: false, confirmed: true },
    });
    expect(fs.existsSync(path.join(sandbox.stateDir, 'acp_token.json'))).toBe(false);
    const again = await agyctl(['logout'], sandbox);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toMatch(/^Already logged out: there was no acp_token\.json; a fresh server refuses/);
    expect(again.stdout).not.toContain('Logged out (');
    expect(again.stderr).not.toContain('The server logged out');
    const local = await agyctl(['logout', '--local', '--json'], sandbox);
    expect(local.exitCode).toBe(0);
    expect(JSON.parse(local.stdout).logout).toMatchObject({ alreadyLoggedOut: true, tokenRemoved: false });
  });

  it('on a box with no state dir says only that it was already logged out', async () => {
    sandbox = makeSandbox();
    fs.rmSync(sandbox.stateDir, { recursive: true, force: true });
    const r = await agyctl(['logout'], sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Already logged out: there was no acp_token\.json/);
    expect(r.stderr).not.toMatch(/logged out/i);
  });

  it('exits 6 when credentials still work (an API key in the environment)', async () => {
    sandbox = makeSandbox({ GEMINI_API_KEY: 'AIzaFAKEFAKEFAKEFAKEFAKEFAKE' });
    writeSettings(sandbox, { auth: { type: 'gemini-api-key' } });
    const out = await agyctl(['logout', '--local'], sandbox);
    expect(out.exitCode).toBe(6);
    expect(out.stdout).toContain('Credentials still work');
    expect(conversationsLeft(sandbox)).toEqual([]);
  });
});

describe('login over a credential check accepts', () => {
  it('login --detach on a broken settings.json refuses first, before a word about replacing the credential', async () => {
    sandbox = makeSandbox();
    expect((await loginWithBrowser(sandbox)).result.exitCode).toBe(0);
    fs.writeFileSync(path.join(sandbox.stateDir, 'settings.json'), '{"auth": ');
    const r = await agyctl(['login', '--detach'], sandbox);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error: \S+settings\.json line \d+ column \d+:/);
    expect(r.stderr).not.toContain('already holds a credential');
  });

  it('on a terminal asks first (no by default: nothing changes); without one says so and signs in; --force skips the question', async () => {
    sandbox = makeSandbox();
    expect((await loginWithBrowser(sandbox)).result.exitCode).toBe(0);
    const token = path.join(sandbox.stateDir, 'acp_token.json');
    const before = fs.readFileSync(token);
    const tty = await execa('script', ['-qec', `node ${BIN} login --timeout 30s`, '/dev/null'], {
      env: sandbox.env,
      extendEnv: false,
      cwd: sandbox.root,
      input: 'n\n',
      reject: false,
      timeout: 30_000,
    });
    expect(tty.exitCode, tty.stdout).toBe(0);
    expect(tty.stdout).toContain('acp_token.json already holds a credential `agyctl check` accepts');
    expect(tty.stdout).toContain('Sign in again and replace it? [y/N]');
    expect(tty.stdout).toContain('Nothing changed');
    expect(fs.readFileSync(token)).toEqual(before);
    expect(shimDirsLeft(sandbox)).toEqual([]);

    const again = await loginWithBrowser(sandbox, {}, []);
    expect(again.result.exitCode).toBe(0);
    expect(String(again.result.stderr)).not.toContain('already holds'); // --json: the document only
    const piped = spawnAgyctl(['login', '--detach', '--timeout', '30s'], sandbox);
    const r = await piped;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stderr)).toContain('already holds a credential `agyctl check` accepts');
    expect(String(r.stderr)).toContain('signing in again replaces it');
    expect((await agyctl(['login', 'cancel'], sandbox)).exitCode).toBe(0);
    const forced = await agyctl(['login', '--detach', '--force', '--timeout', '30s'], sandbox);
    expect(forced.exitCode).toBe(0);
    expect(forced.stderr).not.toContain('already holds');
    expect((await agyctl(['login', 'cancel'], sandbox)).exitCode).toBe(0);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });
});

describe('the paste prompt on a terminal', () => {
  it('is not drawn again after a paste that was delivered', async () => {
    sandbox = makeSandbox();
    const child = execa('script', ['-qec', `stty cols 200; node ${BIN} login --timeout 30s`, '/dev/null'], {
      env: sandbox.env,
      extendEnv: false,
      cwd: sandbox.root,
      stdin: 'pipe',
      reject: false,
      timeout: 40_000,
      buffer: true,
    });
    let seen = '';
    const url = await new Promise<string>((resolve) => {
      child.stdout!.on('data', (c: Buffer) => {
        seen += c.toString('utf8');
        const m = /https:\/\/accounts\.google\.com\/\S+/.exec(seen);
        if (m && seen.includes('paste the address your browser ended on>')) resolve(m[0]);
      });
    });
    const redirect = redirectFor(url);
    child.stdin!.write(`${redirect}\r`);
    const r = await child;
    expect(r.exitCode, seen).toBe(0);
    const out = String(r.stdout);
    expect(out, out).toContain('a fresh server accepted the credentials');
    const afterPaste = out.slice(out.lastIndexOf(redirect.slice(-20)));
    expect(afterPaste).not.toContain('paste the address your browser ended on>');
  });
});
