/**
 * `agyctl probe --sign-in` against every launch path of the simulator: the
 * channel, the launcher and its arguments, the URL's anatomy with secrets
 * redacted; and nothing left behind: no process of the group it started,
 * the listener's port closed, the state dir listing and settings.json bytes
 * as they were.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox, waitNoProcesses, writeSettings } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

interface Report {
  pid: number;
  method: string;
  channel: string | null;
  launcher: { program: string; args: string[]; file?: { kind: string } } | null;
  message: string | null;
  elicitation: { id: string; message: string; answer: string } | null;
  kind: string | null;
  url: {
    host: string;
    path: string;
    redirect: { uri: string; host: string; port: number; path: string };
    params: Record<string, string>;
  };
  listener: { port: number; contacted: boolean } | null;
  settings: { rewritten: boolean; restored: boolean };
  token: { file: string };
  stateDir: { unchanged: boolean; removed: string[]; left: string[]; missing: string[] };
  rejected: unknown[];
}

function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.join(rel, d.name);
      const st = fs.lstatSync(path.join(dir, child));
      out.push(`${child} ${st.isDirectory() ? 'dir' : st.size} ${(st.mode & 0o777).toString(8)}`);
      if (d.isDirectory()) walk(child);
    }
  };
  walk('');
  return out.sort();
}

function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

/** A state dir with a settings.json in an unusual layout (any rewrite changes its bytes) and an earlier conversation. */
function prepare(sb: Sandbox): { settings: string; before: string[] } {
  const settings = writeSettings(sb, '{ "auth":   {"type": "oauth-personal"},\n  "ui": {"theme": "dark"} }\n');
  fs.mkdirSync(path.join(sb.stateDir, 'conversations'));
  fs.writeFileSync(
    path.join(sb.stateDir, 'conversations', '11111111-2222-4333-8444-555555555555.meta'),
    '{"cwd":"/x"}',
  );
  return { settings: fs.readFileSync(settings, 'utf8'), before: listing(sb.stateDir) };
}

async function probe(sb: Sandbox, env: NodeJS.ProcessEnv): Promise<Report> {
  const result = await agyctl(['probe', '--sign-in', '--json', '--timeout', '20s'], sb, { env });
  expect(result.exitCode, result.stderr).toBe(0);
  return (parseJson(result.stdout) as { signIn: Report }).signIn;
}

describe('probe --sign-in', () => {
  /** Mode, channel, launcher program, its first arguments, and for launcher-file the kind of file it was handed. */
  const paths: Array<[string, string, string | null, string[] | null, string?]> = [
    ['default', 'shim', 'BROWSER', null],
    ['xdg-only', 'shim', 'xdg-open', null],
    ['display-only', 'shim', 'BROWSER', null],
    ['gio', 'shim', 'gio', ['open']],
    ['kioclient', 'shim', 'kioclient', ['exec']],
    ['browser-template', 'shim', 'BROWSER', null],
    ['browser-list', 'shim', 'BROWSER', null],
    ['stdout', 'stdout', null, null],
    ['stderr', 'stderr', null, null],
    ['osc8', 'stdout', null, null],
    ['colour-split', 'stderr', null, null],
    ['split-lines', 'stderr', null, null],
    ['split-write', 'stderr', null, null],
    ['rpc-notification', 'rpc', null, null],
    ['rpc-request', 'rpc', null, null],
    ['meta-response', 'rpc', null, null],
    ['error-data', 'rpc', null, null],
    ['html-file', 'launcher-file', 'BROWSER', null, 'html'],
    ['html-file-url', 'launcher-file', 'BROWSER', null, 'html'],
    ['desktop-file', 'launcher-file', 'BROWSER', null, 'desktop'],
    ['url-file', 'launcher-file', 'BROWSER', null, 'url'],
  ];

  it.each(paths)(
    'AGY_SIM_LAUNCH=%s: channel %s, launcher %s; nothing left behind',
    async (mode, channel, program, firstArgs, fileKind) => {
      sandbox = makeSandbox();
      const { settings, before } = prepare(sandbox);
      const r = await probe(sandbox, { AGY_SIM_LAUNCH: mode });
      expect(r.channel).toBe(channel);
      expect(r.method).toBe('oauth-personal');
      if (program) {
        expect(r.launcher!.program).toBe(program);
        const urlArg = r.launcher!.args.at(-1)!;
        if (fileKind) {
          // The page the simulator wrote, in its private dir under the sandbox's TMPDIR.
          const where = mode === 'html-file-url' ? `file://${sandbox.root}` : sandbox.root;
          expect(urlArg.startsWith(`${where}/agy-sim-page-`)).toBe(true);
          expect(urlArg).toMatch(/\/signin\.(html|desktop|url)$/);
          expect(r.launcher!.file).toEqual({ kind: fileKind });
        } else {
          expect(urlArg).toMatch(/^https:\/\/accounts\.google\.com\/.*state=\[REDACTED\]/);
          expect(r.launcher).not.toHaveProperty('file');
        }
        if (firstArgs) expect(r.launcher!.args.slice(0, -1)).toEqual(firstArgs);
      } else expect(r.launcher).toBeNull();
      if (channel === 'rpc') expect(r.message).toMatch(/_vendor\/auth_url|_vendor\/open_url|_meta|error\.data/);
      expect(r.url.host).toBe('accounts.google.com');
      expect(r.url.path).toBe('/o/oauth2/v2/auth');
      expect(r.url.redirect).toMatchObject({ host: '127.0.0.1', path: '/' });
      expect(r.url.redirect.port).toBeGreaterThan(0);
      expect(r.listener).toEqual({ port: r.url.redirect.port, contacted: false });
      expect(r.url.params).toMatchObject({
        response_type: 'code',
        state: '[REDACTED]',
        code_challenge: '[REDACTED]',
        code_challenge_method: 'S256',
        access_type: 'offline',
      });
      expect(JSON.stringify(r)).not.toMatch(/state=[0-9a-f]{32}/);
      expect(r.settings).toEqual({
        file: path.join(sandbox.stateDir, 'settings.json'),
        rewritten: false,
        existedBefore: true,
        restored: false,
      });
      expect(r.token.file).toBe(path.join(sandbox.stateDir, 'acp_token.json'));
      expect(r.stateDir).toMatchObject({ unchanged: true, left: [], missing: [] });
      // Nothing left: the process group, the listener, files.
      expect(groupGone(r.pid)).toBe(true);
      expect(await waitNoProcesses(sandbox)).toEqual([]);
      expect(await portClosed(r.url.redirect.port)).toBe(true);
      expect(listing(sandbox.stateDir)).toEqual(before);
      expect(fs.readFileSync(path.join(sandbox.stateDir, 'settings.json'), 'utf8')).toBe(settings);
      expect(
        fs.readdirSync(sandbox.root).filter((f) => f.startsWith('agyctl-') || f.startsWith('agy-sim-page-')),
      ).toEqual([]);
    },
  );

  it('a launcher handed an HTML page: the human report names the channel, the launcher and the file', async () => {
    sandbox = makeSandbox();
    const result = await agyctl(['probe', '--sign-in', '--timeout', '20s'], sandbox, {
      env: { AGY_SIM_LAUNCH: 'html-file' },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^channel: +launcher-file \(a launcher was handed an HTML page that leads to the URL: BROWSER \/.*\/agy-sim-page-[^/]+\/signin\.html\)$/m,
    );
    expect(result.stdout).toMatch(/^listener: +127\.0\.0\.1:\d+, never contacted/m);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('a server that rewrites settings.json when authenticate starts: reported, and the original bytes put back', async () => {
    sandbox = makeSandbox();
    const { settings, before } = prepare(sandbox);
    const result = await agyctl(['probe', '--sign-in', '--timeout', '20s'], sandbox, {
      env: { AGY_SIM_AUTH_START_WRITES_SETTINGS: '1' },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^settings: +the server rewrote .*settings\.json; its original bytes were put back$/m,
    );
    expect(result.stdout).toMatch(
      /^channel: +shim \(a launcher: BROWSER https:\/\/accounts\.google\.com\/.*state=\[REDACTED\]/m,
    );
    expect(result.stdout).toMatch(/^listener: +127\.0\.0\.1:\d+, never contacted/m);
    expect(result.stdout).toMatch(/^state dir: .* as it was$/m);
    expect(result.stderr).toMatch(/the server rewrote .*original bytes back/);
    expect(fs.readFileSync(path.join(sandbox.stateDir, 'settings.json'), 'utf8')).toBe(settings);
    expect(listing(sandbox.stateDir)).toEqual(before);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('no URL on any channel: exit 5, the candidates in --json details, the state dir as it was', async () => {
    sandbox = makeSandbox();
    const { before } = prepare(sandbox);
    const result = await agyctl(['probe', '--sign-in', '--json', '--timeout', '3s'], sandbox, {
      env: { AGY_SIM_LAUNCH: 'none' },
    });
    expect(result.exitCode).toBe(5);
    const doc = parseJson(result.stdout) as { ok: boolean; error: { code: string }; candidates: unknown[] };
    expect(doc).toMatchObject({ ok: false, error: { code: 'timeout', exit: 5 }, candidates: [] });
    expect(listing(sandbox.stateDir)).toEqual(before);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('a server that creates settings.json when authenticate starts: reported, and removed again', async () => {
    sandbox = makeSandbox();
    const r = await probe(sandbox, { AGY_SIM_AUTH_START_WRITES_SETTINGS: '1' });
    expect(r.settings).toMatchObject({ rewritten: true, existedBefore: false, restored: true });
    expect(fs.existsSync(path.join(sandbox.stateDir, 'settings.json'))).toBe(false);
    expect(r.stateDir).toMatchObject({ unchanged: true, left: [], missing: [] });
  });

  it('ACP URL elicitation: the channel, its id and message, answered cancel; no sign-in, nothing left', async () => {
    sandbox = makeSandbox();
    const { settings, before } = prepare(sandbox);
    const r = await probe(sandbox, { AGY_SIM_ELICITATION: 'only', AGY_SIM_LAUNCH: 'none' });
    expect(r.channel).toBe('elicitation');
    expect(r.kind).toBe('loopback');
    expect(r.elicitation).toEqual({
      id: expect.stringMatching(/^agy-sim-signin-[0-9a-f]{8}$/),
      message: 'Sign in with your Google account to use Antigravity.',
      answer: 'cancel',
    });
    expect(r.launcher).toBeNull();
    expect(r.url).toMatchObject({ host: 'accounts.google.com', redirect: { host: '127.0.0.1', path: '/' } });
    expect(r.url.params.state).toBe('[REDACTED]');
    expect(r.listener).toEqual({ port: r.url.redirect.port, contacted: false });
    expect(fs.existsSync(path.join(sandbox.stateDir, 'acp_token.json'))).toBe(false);
    expect(fs.readFileSync(path.join(sandbox.stateDir, 'settings.json'), 'utf8')).toBe(settings);
    expect(listing(sandbox.stateDir)).toEqual(before);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('ACP URL elicitation of a device page: kind device, no listener; the human report names the channel', async () => {
    sandbox = makeSandbox();
    const env = { AGY_SIM_ELICITATION: 'only', AGY_SIM_ELICITATION_PAGE: 'device', AGY_SIM_DEVICE_APPROVE_MS: '0' };
    const r = await probe(sandbox, env);
    expect(r).toMatchObject({ channel: 'elicitation', kind: 'device', listener: null });
    expect(r.url).toMatchObject({ host: 'www.google.com', path: '/device', redirect: { uri: '', port: null } });
    // cancel was the answer, so the simulator never signed in.
    expect(fs.existsSync(path.join(sandbox.stateDir, 'acp_token.json'))).toBe(false);
    const human = await agyctl(['probe', '--sign-in', '--timeout', '20s'], sandbox, { env });
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      /^channel: +elicitation \(ACP URL elicitation agy-sim-signin-[0-9a-f]{8} tied to authenticate, answered cancel\)$/m,
    );
    expect(human.stdout).toMatch(/^message: +"Sign in with your Google account to use Antigravity\."$/m);
    expect(human.stdout).toMatch(/^redirect: +none \(a page the server follows itself/m);
    expect(human.stdout).toMatch(/^sign-in kind: a device-code or verification page/m);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('--method must be a browser method; --method without --sign-in is a usage error', async () => {
    sandbox = makeSandbox();
    expect((await agyctl(['probe', '--sign-in', '--method', 'gemini-api-key'], sandbox)).exitCode).toBe(2);
    expect((await agyctl(['probe', '--method', 'oauth-personal'], sandbox)).exitCode).toBe(2);
  });
});
