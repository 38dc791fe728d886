/** The capture pipeline's sources, one by one: terminal text, JSON-RPC messages, launcher runs; and the evidence they leave. */

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Connection } from '../../src/acp/connection.js';
import type { JsonRpcMessage } from '../../src/acp/framing.js';
import {
  describeCandidate,
  EvidenceLog,
  MAX_EVIDENCE,
  noSignInUrlError,
  redactEvidence,
} from '../../src/login/capture/evidence.js';
import { launcherUrls, noUrlReason, parseLauncherLog } from '../../src/login/capture/launcher-source.js';
import { UrlCapture } from '../../src/login/capture/pipeline.js';
import { messageUrls } from '../../src/login/capture/rpc-source.js';
import { terminalUrls, visibleText } from '../../src/login/capture/text-source.js';
import {
  BROWSER_NAMES,
  createShimDir,
  LAUNCHER_NAMES,
  SHIM_NAMES,
  type ShimDir,
  shimParent,
} from '../../src/login/shims.js';

const GOOD =
  'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=x.apps.googleusercontent.com&redirect_uri=http%3A%2F%2F127.0.0.1%3A35293%2F&scope=a+b&state=S123&access_type=offline&code_challenge=CHAL&code_challenge_method=S256';

describe('terminal text', () => {
  it('finds the URL inside an OSC 8 hyperlink (ST and BEL endings, 8-bit OSC) whose visible text has none', () => {
    expect(terminalUrls(`\x1b]8;;${GOOD}\x1b\\Sign in to Google\x1b]8;;\x1b\\`)).toEqual([GOOD]);
    expect(terminalUrls(`\x1b]8;id=1;${GOOD}\x07Sign in\x1b]8;;\x07`)).toEqual([GOOD]);
    expect(terminalUrls(`\x9d8;;${GOOD}\x9cSign in\x9d8;;\x9c`)).toEqual([GOOD]);
    expect(visibleText(`\x1b]8;;${GOOD}\x1b\\Sign in to Google\x1b]8;;\x1b\\`)).toBe('Sign in to Google');
  });

  it('joins a URL cut by colour codes, tput sgr0 (ESC ( B) and 8-bit CSI included', () => {
    const cut = (a: number, b: number): string =>
      `\x1b[4m${GOOD.slice(0, a)}\x1b(B\x1b[m\x1b[38;5;12m${GOOD.slice(a, b)}\x9b0m${GOOD.slice(b)}\x1b(B\x1b[m`;
    expect(terminalUrls(`Sign in: ${cut(40, 120)}`)).toEqual([GOOD]);
    expect(terminalUrls(`\r${cut(10, 200)}\r`)).toEqual([GOOD]);
  });

  it('drops sentence punctuation after a URL and ignores bare schemes', () => {
    expect(terminalUrls(`open ${GOOD}.`)).toEqual([GOOD]);
    expect(terminalUrls('(see https://example.com/x), then https:// nothing')).toEqual(['https://example.com/x']);
  });
});

describe('JSON-RPC messages', () => {
  const unsolicited = { solicited: false, method: undefined };
  it('scans notifications, unknown requests and responses to ids we never used, whole', () => {
    expect(
      messageUrls(
        { jsonrpc: '2.0', method: '_vendor/auth_url', params: { url: GOOD } },
        { solicited: false, method: '_vendor/auth_url' },
      ),
    ).toEqual([{ url: GOOD, where: 'notification _vendor/auth_url params.url' }]);
    expect(
      messageUrls({ id: 7, method: 'x/open', params: { target: [{ href: `go to ${GOOD}` }] } }, unsolicited)[0],
    ).toEqual({ url: GOOD, where: 'request x/open params.target[0].href' });
    expect(messageUrls({ id: null, result: { _meta: { signIn: { url: GOOD } } } }, unsolicited)[0]!.where).toBe(
      'response to id null (not ours) result._meta.signIn.url',
    );
    expect(messageUrls({ id: null, error: { code: -1, message: `visit ${GOOD}` } }, unsolicited)[0]!.where).toMatch(
      /error\.message$/,
    );
  });

  it('an answer to our own request: only _meta fields and error data', () => {
    const answer: JsonRpcMessage = { id: 2, result: { text: GOOD, nested: { _meta: { authUrl: GOOD } } } };
    expect(messageUrls(answer, { solicited: true, method: 'authenticate' })).toEqual([
      { url: GOOD, where: 'answer to authenticate result.nested._meta.authUrl' },
    ]);
    expect(
      messageUrls(
        { id: 3, error: { code: -32000, message: GOOD, data: { link: GOOD } } },
        { solicited: true, method: 'authenticate' },
      ),
    ).toEqual([{ url: GOOD, where: 'answer to authenticate error.data.link' }]);
  });

  it('Connection tells listeners about every message, solicited only for answers to pending requests, and passes raw noise', async () => {
    const fromServer = new PassThrough();
    const conn = new Connection(fromServer, new PassThrough());
    const seen: Array<[string, boolean, string | undefined]> = [];
    const noise: Array<[string, string]> = [];
    conn.onServerMessage((m, info) => seen.push([JSON.stringify(m.id ?? m.method), info.solicited, info.method]));
    conn.onServerMessage(() => {
      throw new Error('a broken listener');
    });
    conn.onNoise((line, raw) => noise.push([line, raw]));
    const answer = conn.request('initialize', {});
    fromServer.write(
      '{"jsonrpc":"2.0","method":"_vendor/auth_url","params":{}}\n{"jsonrpc":"2.0","id":99,"result":{}}\n{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n',
    );
    fromServer.write('\x1b]8;;https://x.test/\x1b\\link\x1b]8;;\x1b\\\n');
    await expect(answer).resolves.toEqual({ ok: true });
    expect(seen).toEqual([
      ['"_vendor/auth_url"', false, '_vendor/auth_url'],
      ['99', false, undefined],
      ['1', true, 'initialize'],
    ]);
    expect(noise).toEqual([['link', '\x1b]8;;https://x.test/\x1b\\link\x1b]8;;\x1b\\']]);
  });
});

describe('launcher runs', () => {
  let shims: ShimDir | undefined;
  afterEach(() => shims?.remove());

  it('parses one run per line; says why a run had no URL', () => {
    const runs = parseLauncherLog(`gio\topen\t${GOOD}\nxdg-open\t--version\nagyctl-browser\t%s\nwslview\n`);
    expect(runs.map((r) => r.program)).toEqual(['gio', 'xdg-open', 'agyctl-browser', 'wslview']);
    expect(launcherUrls(runs[0]!)).toEqual([GOOD]);
    expect(noUrlReason(runs[1]!)).toBe('got no URL among its arguments');
    expect(noUrlReason(runs[2]!)).toMatch(/literal %s/);
    expect(noUrlReason(runs[3]!)).toBe('ran without arguments');
  });

  it('covers the launchers of the common libraries and the browsers by name', () => {
    for (const name of [
      'xdg-open',
      'gio',
      'gvfs-open',
      'gnome-open',
      'kde-open',
      'kde-open5',
      'kioclient',
      'kioclient5',
      'exo-open',
      'x-www-browser',
      'www-browser',
      'sensible-browser',
      'wslview',
    ])
      expect(LAUNCHER_NAMES).toContain(name);
    for (const name of ['firefox', 'google-chrome', 'chromium', 'chromium-browser'])
      expect(BROWSER_NAMES).toContain(name);
  });

  it('every shim records its whole run on one line, tabs and newlines inside an argument made spaces', () => {
    shims = createShimDir({});
    for (const name of SHIM_NAMES) execFileSync(path.join(shims.dir, name), ['exec', `a\tb\nc`]);
    const runs = parseLauncherLog(fs.readFileSync(shims.log, 'utf8'));
    expect(runs).toEqual(SHIM_NAMES.map((program) => ({ program, args: ['exec', 'a b c'] })));
  });

  it('the shim directory avoids a TMPDIR that BROWSER readings would cut (":", " ", "%")', () => {
    const odd = fs.mkdtempSync(path.join(os.tmpdir(), 'odd: %s '));
    try {
      expect(shimParent({ TMPDIR: odd })).not.toBe(odd);
      expect(shimParent({ TMPDIR: odd })).toMatch(/^[A-Za-z0-9_./-]+$/);
    } finally {
      fs.rmSync(odd, { recursive: true, force: true });
    }
  });

  it('the pipeline: a launcher run without a URL is quiet evidence; gio open URL wins', async () => {
    shims = createShimDir({});
    const rejected: Array<[string, boolean]> = [];
    const capture = new UrlCapture(shims, (c, loud) => rejected.push([describeCandidate(c), loud]));
    execFileSync(path.join(shims.dir, 'xdg-open'), ['--version']);
    capture.flushLog();
    execFileSync(path.join(shims.dir, 'gio'), ['open', GOOD]);
    const found = await capture.found;
    expect(found).toMatchObject({
      source: 'shim',
      via: 'gio',
      args: ['open', expect.stringContaining('state=[REDACTED]')],
    });
    expect(rejected).toEqual([['launcher xdg-open --version: got no URL among its arguments', false]]);
  });

  it('the pipeline: a JSON-RPC notification wins; an unusable one is evidence', async () => {
    shims = createShimDir({});
    const capture = new UrlCapture(shims, () => undefined);
    capture.feedMessage(
      {
        method: '_vendor/auth_url',
        params: { url: 'https://accounts.google.com/o/oauth2/v2/auth?response_type=token&state=SECRET' },
      },
      { solicited: false, method: '_vendor/auth_url' },
    );
    capture.feedMessage(
      { method: '_vendor/auth_url', params: { url: GOOD } },
      { solicited: false, method: '_vendor/auth_url' },
    );
    expect(await capture.found).toMatchObject({ source: 'rpc', via: 'notification _vendor/auth_url params.url' });
    expect(capture.evidence.candidates).toEqual([
      expect.objectContaining({
        channel: 'rpc',
        reason: 'response_type is not "code"',
        url: expect.stringContaining('state=[REDACTED]'),
      }),
    ]);
    capture.close();
  });
});

describe('evidence', () => {
  it('redacts state, code and the PKCE challenge', () => {
    const r = redactEvidence(`${GOOD}&code=4/0AbC&nonce=N1`);
    for (const secret of ['S123', 'CHAL', '4/0AbC', 'N1']) expect(r).not.toContain(secret);
    expect(r).toContain('code_challenge_method=S256');
  });

  it('the timeout error lists every candidate with its reason, and the same in details; bounded', () => {
    const log = new EvidenceLog();
    log.add({ channel: 'shim', via: 'xdg-open', args: ['--version'], reason: 'got no URL among its arguments' });
    log.add({ channel: 'stderr', url: 'https://example.com/', reason: 'host example.com is not Google' });
    const err = noSignInUrlError(30_000, log);
    expect(err.exit).toBe(5);
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(/within 30s/);
    expect(err.message).toContain('  - launcher xdg-open --version: got no URL among its arguments');
    expect(err.message).toContain('  - stderr: https://example.com/ — host example.com is not Google');
    expect(err.details).toMatchObject({
      candidates: [{ channel: 'shim', via: 'xdg-open' }, { channel: 'stderr' }],
      candidatesDropped: 0,
    });
    for (let i = 0; i < MAX_EVIDENCE + 5; i++) log.add({ channel: 'stdout', reason: String(i) });
    expect(log.candidates).toHaveLength(MAX_EVIDENCE);
    expect(noSignInUrlError(1000, log).message).toMatch(/and 7 more/);
  });
});

describe('simulator switches of the capture area', () => {
  it('parses the new launch modes and the token store, and refuses unknown values', async () => {
    const { loadConfig, ConfigError, CAPTURE_LAUNCH_MODES } = await import('../../src/sim/config.js');
    for (const mode of CAPTURE_LAUNCH_MODES) expect(loadConfig({ AGY_SIM_LAUNCH: mode }).launch).toBe(mode);
    expect(loadConfig({}).tokenStore).toBe('file');
    expect(loadConfig({ AGY_SIM_TOKEN_STORE: 'keyring' }).tokenStore).toBe('keyring');
    expect(() => loadConfig({ AGY_SIM_TOKEN_STORE: 'vault' })).toThrow(ConfigError);
    expect(loadConfig({ AGY_SIM_AUTH_START_WRITES_SETTINGS: '1' }).authStartWritesSettings).toBe(true);
  });

  it('the keyring store keeps the token outside the state dir', async () => {
    const { statePaths } = await import('../../src/sim/paths.js');
    const p = statePaths({ HOME: '/h' }, 'keyring');
    expect(p.token).toBe('/h/.local/share/agy-sim-keyring/token.json');
    expect(p.token.startsWith(p.stateDir)).toBe(false);
    expect(statePaths({ HOME: '/h' }).token).toBe('/h/.gemini/antigravity-acp/acp_token.json');
  });

  it('the OSC 8 and colour-split lines hide the URL from a plain CSI stripper but not from the capture', async () => {
    const { osc8Line, colourSplitLine } = await import('../../src/sim/launch.js');
    const { stripAnsi } = await import('../../src/acp/framing.js');
    for (const line of [osc8Line(GOOD), colourSplitLine(GOOD)]) {
      expect(stripAnsi(line)).not.toContain(GOOD);
      expect(terminalUrls(line)).toEqual([GOOD]);
    }
  });
});
