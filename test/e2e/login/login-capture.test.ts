/**
 * login against every launch path a server build may use to show its
 * sign-in URL: launcher programs (gio, kioclient), BROWSER read
 * as a template or a colon list, terminal hyperlinks and colour-split URLs,
 * and JSON-RPC messages; and the evidence a timeout lists when no usable
 * URL shows up.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import { agyctl, makeSandbox, parseEvents, type Sandbox, spawnAgyctl, waitNoProcesses } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

const shimDirsLeft = (sb: Sandbox): string[] => fs.readdirSync(sb.root).filter((f) => f.startsWith('agyctl-login-'));
/** The private dirs of the pages the simulator's file modes hand a launcher. */
const simPagesLeft = (sb: Sandbox): string[] => fs.readdirSync(sb.root).filter((f) => f.startsWith('agy-sim-page-'));

async function loginWithBrowser(sb: Sandbox, env: NodeJS.ProcessEnv = {}, extraArgs: string[] = []) {
  const child = spawnAgyctl(['login', '--json', '--timeout', '30s', ...extraArgs], sb, { env });
  const url = await waitForEvent(child, 'url');
  expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
  const result = await child;
  return { url, result, events: parseEvents(String(result.stdout)) };
}

/**
 * A login whose server script first runs `lines` (launchers handed the wrong things, a broken URL), then the
 * simulator showing no URL at all: it must time out (exit 5) with the evidence in its last event.
 */
async function loginTimingOut(sb: Sandbox, lines: string[]) {
  const server = path.join(sb.root, 'odd-server.sh');
  const simulator = `AGY_SIM_LAUNCH=none exec node '${path.resolve('scripts/agy-acp-sim')}'`;
  fs.writeFileSync(server, ['#!/bin/sh', ...lines, simulator, ''].join('\n'), { mode: 0o755 });
  const result = await agyctl(['login', '--json', '--timeout', '4s'], sb, { env: { AGYCTL_SERVER: server } });
  expect(result.exitCode, String(result.stderr)).toBe(5);
  const last = parseEvents(String(result.stdout)).at(-1)!;
  expect(last).toMatchObject({ event: 'error', code: 'timeout', exit: 5 });
  return { result, last };
}

/** A TMPDIR whose path BROWSER's readings would cut apart (a colon, a space, a %). */
function oddTmpdir(sb: Sandbox): string {
  const dir = path.join(sb.root, 'odd: dir %s');
  fs.mkdirSync(dir);
  return dir;
}

describe('login: every launch path', () => {
  const paths: Array<[string, NodeJS.ProcessEnv, string]> = [
    ['gio open URL', { AGY_SIM_LAUNCH: 'gio' }, 'shim'],
    ['kioclient exec URL', { AGY_SIM_LAUNCH: 'kioclient' }, 'shim'],
    ['OSC 8 hyperlink on stdout', { AGY_SIM_LAUNCH: 'osc8' }, 'stdout'],
    ['URL split by colour codes (tput sgr0) on stderr', { AGY_SIM_LAUNCH: 'colour-split' }, 'stderr'],
    ['JSON-RPC notification _vendor/auth_url', { AGY_SIM_LAUNCH: 'rpc-notification' }, 'rpc'],
    ['JSON-RPC request with an unknown method', { AGY_SIM_LAUNCH: 'rpc-request' }, 'rpc'],
    ['URL inside _meta of a response', { AGY_SIM_LAUNCH: 'meta-response' }, 'rpc'],
    ['URL inside error data', { AGY_SIM_LAUNCH: 'error-data' }, 'rpc'],
    ['BROWSER (RC01)', { AGY_SIM_LAUNCH: 'default' }, 'shim'],
    ['URL printed on stdout', { AGY_SIM_LAUNCH: 'stdout' }, 'stdout'],
    ['URL cut after /o/oauth2/v2 and wrapped across stderr lines', { AGY_SIM_LAUNCH: 'split-lines' }, 'stderr'],
    ['a stderr line written in two writes', { AGY_SIM_LAUNCH: 'split-write' }, 'stderr'],
    ['URL hard-wrapped inside a Unicode box (│) under a help link', { AGY_SIM_LAUNCH: 'box' }, 'stderr'],
    ['URL hard-wrapped inside an ASCII box (|) under a help link', { AGY_SIM_LAUNCH: 'box-ascii' }, 'stderr'],
    ['an HTML page with a meta refresh, by absolute path', { AGY_SIM_LAUNCH: 'html-file' }, 'launcher-file'],
    ['an HTML page with a meta refresh, as a file:// URL', { AGY_SIM_LAUNCH: 'html-file-url' }, 'launcher-file'],
    ['a .desktop link file', { AGY_SIM_LAUNCH: 'desktop-file' }, 'launcher-file'],
    ['a .url shortcut file', { AGY_SIM_LAUNCH: 'url-file' }, 'launcher-file'],
  ];

  it.each(paths)('%s: url event, exit 0, nothing left', async (_name, env, source) => {
    sandbox = makeSandbox();
    const { url, result, events } = await loginWithBrowser(sandbox, env);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(url.url).toMatch(/^https:\/\/accounts\.google\.com\/o\/oauth2\/v2\/auth\?response_type=code&/);
    expect(url.redirectUri).toBe(`http://127.0.0.1:${String(url.port)}/`);
    expect(url.source).toBe(source);
    expect(events.at(-1)).toMatchObject({ event: 'verified', tokenFile: { mode: '0600' } });
    expect(shimDirsLeft(sandbox)).toEqual([]);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
    expect(simPagesLeft(sandbox)).toEqual([]);
  });

  it.each([
    ['BROWSER read as a colon-separated list', 'browser-list'],
    ['BROWSER read as a `cmd %s` shell template', 'browser-template'],
  ])('%s, with a TMPDIR holding ":", " " and "%%s": exit 0', async (_name, mode) => {
    sandbox = makeSandbox();
    const { url, result } = await loginWithBrowser(sandbox, { AGY_SIM_LAUNCH: mode, TMPDIR: oddTmpdir(sandbox) });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(url.source).toBe('shim');
    expect(url.via).toBe('BROWSER');
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });
});

describe('login: ACP URL elicitation', () => {
  it('a build that shows the URL only through elicitation: accepted, caught on the elicitation channel, exit 0', async () => {
    sandbox = makeSandbox();
    const env = { AGY_SIM_ELICITATION: 'only', AGY_SIM_LAUNCH: 'none' };
    const { url, result, events } = await loginWithBrowser(sandbox, env);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(url).toMatchObject({ source: 'elicitation', redirectUri: `http://127.0.0.1:${String(url.port)}/` });
    expect(String(url.via)).toMatch(/^agy-sim-signin-[0-9a-f]{8}$/);
    expect(String(url.tunnel)).toMatch(/^ssh -N -L /);
    expect(events.at(-1)).toMatchObject({ event: 'verified', tokenFile: { mode: '0600' } });
    expect(await waitNoProcesses(sandbox)).toEqual([]);
    expect(shimDirsLeft(sandbox)).toEqual([]);
  });

  it('a build that also sends it through elicitation: whichever channel wins, the elicitation is accepted, exit 0', async () => {
    sandbox = makeSandbox();
    const env = { AGY_SIM_ELICITATION: 'also', AGY_SIM_LAUNCH: 'stderr' };
    const { url, result } = await loginWithBrowser(sandbox, env, ['-v']);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(['elicitation', 'stderr']).toContain(url.source);
    expect(String(result.stderr)).toMatch(/the server asked elicitation\/create: accepted/);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('human output: the whole URL, its host and the agent message; -v says how the request was answered', async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '-v', '--timeout', '30s'], sandbox, {
      env: { AGY_SIM_ELICITATION: 'only', AGY_SIM_LAUNCH: 'none' },
    });
    let stdout = '';
    const url = await new Promise<string>((resolve) =>
      child.stdout!.on('data', (b: Buffer) => {
        stdout += b.toString();
        const m = /^(https:\/\/accounts\.google\.com\/\S+)$/m.exec(stdout);
        if (m) resolve(m[1]!);
      }),
    );
    expect(await httpGet(redirectFor(url))).toBe(200);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const stderr = String(result.stderr);
    expect(stderr).toContain(
      'The server asks you to open a page on accounts.google.com (ACP URL elicitation); its own words, not checked by agyctl: "Sign in with your Google account to use Antigravity."',
    );
    expect(stderr).toMatch(/the server asked elicitation\/create: accepted: the sign-in URL is shown to the user/);
    expect(stderr).toMatch(/elicitation\/complete/);
  });

  it("a hostile server's sign-in: no bidi or zero-width character, no link in its words, and a warning for another app's client and scope", async () => {
    sandbox = makeSandbox();
    const child = spawnAgyctl(['login', '--timeout', '30s'], sandbox, {
      env: { AGY_SIM_ELICITATION: 'only', AGY_SIM_LAUNCH: 'none', AGY_SIM_HOSTILE_SIGN_IN: '1' },
    });
    let stdout = '';
    const url = await new Promise<string>((resolve) =>
      child.stdout!.on('data', (b: Buffer) => {
        stdout += b.toString();
        const m = /^(https:\/\/accounts\.google\.com\/\S+)$/m.exec(stdout);
        if (m) resolve(m[1]!);
      }),
    );
    expect(await httpGet(redirectFor(url))).toBe(200);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const stderr = String(result.stderr);
    expect(stderr).not.toMatch(/\p{Cf}/u);
    expect(stderr).toContain(
      '"Sign in at https[:]//accounts.google.com.evil.example/signin moc.elgoog to keep your work."',
    );
    expect(stderr).not.toContain('https://accounts.google.com.evil.example');
    expect(stderr).toMatch(
      /warning: this sign-in URL names the OAuth client 999999999999-someoneelse\.apps\.googleusercontent\.com and the scope\(s\) https:\/\/www\.googleapis\.com\/auth\/drive/,
    );

    fs.rmSync(path.join(sandbox.stateDir, 'acp_token.json'));
    const json = spawnAgyctl(['login', '--json', '--timeout', '30s'], sandbox, {
      env: { AGY_SIM_ELICITATION: 'only', AGY_SIM_LAUNCH: 'none', AGY_SIM_HOSTILE_SIGN_IN: '1' },
    });
    let out = '';
    const event = await new Promise<Record<string, unknown>>((resolve) =>
      json.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const line = out.split('\n').find((l) => l.includes('"event":"url"'));
        if (line) resolve(JSON.parse(line) as Record<string, unknown>);
      }),
    );
    expect(event.unexpectedClient).toEqual({
      clientId: '999999999999-someoneelse.apps.googleusercontent.com',
      scopes: ['https://www.googleapis.com/auth/drive'],
    });
    expect(await httpGet(redirectFor(String(event.url)))).toBe(200);
    expect((await json).exitCode).toBe(0);
  });

  it('a device-code page: shown as it is, no tunnel, no paste prompt; the server finishes it, exit 0', async () => {
    sandbox = makeSandbox();
    const env = { AGY_SIM_ELICITATION: 'only', AGY_SIM_ELICITATION_PAGE: 'device', AGY_SIM_DEVICE_APPROVE_MS: '300' };
    const json = await agyctl(['login', '--json', '--timeout', '30s'], sandbox, { env });
    expect(json.exitCode, json.stderr).toBe(0);
    const events = parseEvents(json.stdout);
    const url = events.find((e) => e.event === 'url')!;
    expect(url).toMatchObject({ mode: 'device', source: 'elicitation', redirectUri: '' });
    expect(String(url.url)).toMatch(/^https:\/\/www\.google\.com\/device\?user_code=[0-9A-F]{4}-[0-9A-F]{4}$/);
    expect(url).not.toHaveProperty('tunnel');
    expect(url).not.toHaveProperty('port');
    expect(events.at(-1)).toMatchObject({ event: 'verified', tokenFile: { mode: '0600' } });

    fs.rmSync(path.join(sandbox.stateDir, 'acp_token.json'));
    const human = await agyctl(['login', '--timeout', '30s'], sandbox, { env });
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^https:\/\/www\.google\.com\/device\?user_code=/m);
    expect(human.stderr).toContain('The server asks you to open a page on www.google.com (ACP URL elicitation)');
    expect(human.stderr).toContain('No tunnel and nothing to paste');
    expect(human.stderr).not.toMatch(/ssh -N|paste it here|First run this/);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('login --detach with a device page: nothing to finish (exit 2), status --wait follows it to exit 0', async () => {
    sandbox = makeSandbox();
    const env = { AGY_SIM_ELICITATION: 'only', AGY_SIM_ELICITATION_PAGE: 'device', AGY_SIM_DEVICE_APPROVE_MS: '1500' };
    const detached = await agyctl(['login', '--detach', '--timeout', '30s'], sandbox, { env });
    expect(detached.exitCode, detached.stderr).toBe(0);
    expect(detached.stderr).toContain('the server sees the sign-in finish by itself');
    expect(detached.stderr).not.toContain('agyctl login finish');
    const finish = await agyctl(['login', 'finish', 'http://127.0.0.1:1/?code=x&state=y'], sandbox);
    expect(finish.exitCode).toBe(2);
    expect(finish.stderr).toMatch(/^error: This login shows a page the server follows itself .*nothing to paste\.$/m);
    const status = await agyctl(['login', 'status', '--wait'], sandbox);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('elicitation/complete alone never ends the login: the authenticate answer decides (exit 5 when it never comes)', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['login', '--json', '--timeout', '3s'], sandbox, {
      env: {
        AGY_SIM_ELICITATION: 'only',
        AGY_SIM_ELICITATION_PAGE: 'device',
        AGY_SIM_ELICITATION_COMPLETE_EARLY: '1',
        AGY_SIM_DEVICE_APPROVE_MS: '60000',
      },
    });
    expect(result.exitCode, result.stderr).toBe(5);
    const events = parseEvents(result.stdout);
    expect(events.map((e) => e.event)).not.toContain('authenticated');
    expect(events.at(-1)).toMatchObject({ event: 'error', code: 'timeout', exit: 5 });
    expect(fs.existsSync(path.join(sandbox.stateDir, 'acp_token.json'))).toBe(false);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('other agent requests are still -32601, visible with -v and in --trace', async () => {
    sandbox = makeSandbox();
    const trace = path.join(sandbox.root, 'trace.jsonl');
    const child = spawnAgyctl(['login', '--json', '-v', '--trace', trace, '--timeout', '30s'], sandbox, {
      env: { AGY_SIM_LAUNCH: 'rpc-request' },
    });
    const url = await waitForEvent(child, 'url');
    expect(await httpGet(redirectFor(String(url.url)))).toBe(200);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stderr)).toMatch(
      /the server asked _vendor\/open_url: answered error -32601 \(Method not found\)/,
    );
    const sent = fs
      .readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"dir":"send"') && l.includes('"agy-sim-open-url"') && l.includes('"code":-32601'));
    expect(sent.length).toBeGreaterThan(0);
  });
});

describe('login: no usable URL', () => {
  it('nothing on any channel: the timeout says so (exit 5, empty candidate list in --json)', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['login', '--json', '--timeout', '3s'], sandbox, {
      env: { AGY_SIM_LAUNCH: 'none', AGY_SIM_NOISE: 'garbage' },
    });
    expect(result.exitCode).toBe(5);
    const last = parseEvents(String(result.stdout)).at(-1)!;
    expect(last).toMatchObject({ event: 'error', code: 'timeout', exit: 5, candidates: [] });
    expect(String(last.message)).toMatch(/No sign-in URL from the server within 3s/);
    expect(String(last.message)).toMatch(/Nothing that looked like a URL appeared/);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('the timeout lists every candidate on every channel and why each was rejected, with secrets redacted', async () => {
    sandbox = makeSandbox();
    // A server build that runs launchers with the wrong things and prints a broken URL, then never shows a good one.
    const { result, last } = await loginTimingOut(sandbox, [
      'xdg-open --version',
      "gio open 'https://example.com/login?state=SECRETSTATE1&code_challenge=SECRETCHALLENGE'",
      '"$BROWSER" \'%s\'',
      "printf 'see https://accounts.google.com/o/oauth2/v2/auth?response_type=token&state=SECRETSTATE2\\n' >&2",
    ]);
    const candidates = last.candidates as Array<Record<string, unknown>>;
    expect(candidates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: 'shim',
          via: 'xdg-open',
          args: ['--version'],
          reason: 'got no URL among its arguments',
        }),
        expect.objectContaining({
          channel: 'shim',
          via: 'gio',
          reason: expect.stringMatching(/host example\.com is not Google's/),
        }),
        expect.objectContaining({ channel: 'shim', via: 'BROWSER', reason: expect.stringMatching(/literal %s/) }),
        expect.objectContaining({ channel: 'stderr', reason: 'response_type is not "code"' }),
      ]),
    );
    const message = String(last.message);
    expect(message).toMatch(/launcher xdg-open --version: got no URL/);
    expect(message).toMatch(/stderr: https:\/\/accounts\.google\.com\/.*state=\[REDACTED\]/);
    const everything = String(result.stdout) + String(result.stderr);
    for (const secret of ['SECRETSTATE1', 'SECRETSTATE2', 'SECRETCHALLENGE']) expect(everything).not.toContain(secret);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
    expect(shimDirsLeft(sandbox)).toEqual([]);
  });

  it('files a launcher was handed that lead nowhere usable: each is evidence naming its kind, none is followed, their contents never appear', async () => {
    sandbox = makeSandbox();
    const pages = path.join(sandbox.root, 'pages');
    const outside = path.join(sandbox.root, 'outside');
    fs.mkdirSync(pages, { mode: 0o700 });
    fs.mkdirSync(outside);
    const good =
      'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2F&state=SECRETSTATE3';
    fs.writeFileSync(
      path.join(outside, 'real.html'),
      `<meta http-equiv="refresh" content="0;url=${good.replace(/&/g, '&amp;')}">`,
    );
    fs.symlinkSync(path.join(outside, 'real.html'), path.join(pages, 'link.html'));
    fs.writeFileSync(
      path.join(pages, 'evil.html'),
      '<meta http-equiv="refresh" content="0;url=https://evil.example/auth?response_type=code&amp;state=SECRETSTATE4"><p>PAGE-BODY-SECRET</p>',
    );
    fs.writeFileSync(path.join(pages, 'empty.desktop'), '[Desktop Entry]\nType=Link\nName=PAGE-BODY-SECRET\n');
    const { result, last } = await loginTimingOut(sandbox, [
      `xdg-open '${path.join(pages, 'link.html')}'`,
      `"$BROWSER" 'file://${path.join(pages, 'evil.html')}'`,
      `gio open '${path.join(pages, 'empty.desktop')}'`,
      "xdg-open 'file://evil.example/etc/passwd'",
    ]);
    expect(last.candidates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: 'launcher-file',
          via: 'xdg-open',
          file: { kind: 'html' },
          reason: 'not read: a symbolic link (not followed)',
        }),
        expect.objectContaining({
          channel: 'launcher-file',
          via: 'BROWSER',
          file: { kind: 'html' },
          url: 'https://evil.example/auth?response_type=code&state=[REDACTED]',
          reason: expect.stringMatching(/host evil\.example is not Google's/),
        }),
        expect.objectContaining({
          channel: 'launcher-file',
          via: 'gio',
          file: { kind: 'desktop' },
          reason: expect.stringMatching(/^no URL in it/),
        }),
        expect.objectContaining({
          channel: 'launcher-file',
          via: 'xdg-open',
          reason: expect.stringMatching(/another host/),
        }),
      ]),
    );
    expect(String(last.message)).toMatch(
      /an HTML page from launcher BROWSER file:\/\/.*evil\.html: https:\/\/evil\.example\//,
    );
    const everything = String(result.stdout) + String(result.stderr);
    for (const secret of ['SECRETSTATE3', 'SECRETSTATE4', 'PAGE-BODY-SECRET']) expect(everything).not.toContain(secret);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
    expect(shimDirsLeft(sandbox)).toEqual([]);
  });
});
