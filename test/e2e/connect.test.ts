/**
 * agyctl connect against a real OpenSSH: the laptop namespace runs connect,
 * the remote namespace runs sshd, and agyctl login with the simulator runs
 * there over SSH. The laptop's browser is test/helpers/browser-shim.mjs,
 * reached through BROWSER by the `open` package's xdg-open; it requests the
 * redirect_uri on the laptop's own 127.0.0.1, which reaches the remote login
 * only through connect's forward.
 *
 * ssh on the laptop side is a PATH wrapper adding `-F <config>` with BatchMode
 * and no key or known_hosts: those come through connect's --ssh-option,
 * which is how these tests check the pass-through.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import { describe, expect, it } from 'vitest';
import { BIN, makeSandbox, processesOf, ROOT, type Sandbox, SIM } from '../helpers/cli.js';
import { EventStream } from '../helpers/ndjson.js';
import { connectArgs, DEST, requireLab, type SshLab, useSshLab } from '../helpers/netns.js';
import { waitUntil } from '../helpers/ns-lab.js';

const NODE = process.execPath;
const SHIM = path.join(ROOT, 'test', 'helpers', 'browser-shim.mjs');
const RUN_MS = 45_000;

const fx = useSshLab();

interface Sides {
  laptop: Sandbox;
  remote: Sandbox;
  shimLog: string;
}

function sides(lab: SshLab): Sides {
  const remote = makeSandbox();
  const laptop = makeSandbox();
  fx.keep(remote, laptop);
  const shimLog = path.join(laptop.root, 'browser.log');
  const browser = path.join(laptop.root, 'browser');
  fs.writeFileSync(browser, `#!/bin/sh\nexec ${NODE} ${SHIM} "$@"\n`, { mode: 0o755 });
  laptop.env = { ...laptop.env, PATH: `${lab.sshBareBin}:${process.env.PATH}`, BROWSER: browser, SHIM_LOG: shimLog };
  return { laptop, remote, shimLog };
}

const sq = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

/** The remote agyctl: the built binary with the simulator and the remote sandbox's HOME (quoted values exercise connect's quoting). */
function remoteAgyctl(remote: Sandbox, extra: Record<string, string> = {}): string {
  const vars = { HOME: remote.home, TMPDIR: remote.root, NO_COLOR: '1', AGYCTL_SERVER: `${NODE} ${SIM}`, ...extra };
  return `env ${Object.entries(vars)
    .map(([k, v]) => `${k}=${sq(v)}`)
    .join(' ')} ${NODE} ${BIN}`;
}

function startConnect(lab: SshLab, s: Sides, args: string[]): { child: ResultPromise; events: EventStream } {
  const child = lab.run(lab.laptop, NODE, [BIN, ...args], {
    env: s.laptop.env,
    stdin: 'pipe',
    timeoutMs: RUN_MS,
    cwd: s.laptop.root,
  });
  fx.track(child);
  return { child, events: new EventStream(child.stdout!) };
}

function shimEntries(s: Sides): Array<Record<string, unknown>> {
  if (!fs.existsSync(s.shimLog)) return [];
  return fs
    .readFileSync(s.shimLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** No forward, no master, no leftover process on either side; only the lab's sshd remains in "remote". */
async function expectNothingLeft(lab: SshLab, s: Sides, port?: number): Promise<void> {
  await waitUntil(
    async () => (await lab.pids(lab.laptop)).length === 0,
    10_000,
    'no process left in the laptop namespace',
  );
  const sshd = lab.sshdPid();
  await waitUntil(
    async () => (await lab.pids(lab.remote)).every((pid) => pid === sshd),
    10_000,
    'no process but sshd left in the remote namespace',
  );
  expect(processesOf(s.remote)).toEqual([]);
  expect(processesOf(s.laptop)).toEqual([]);
  if (port !== undefined) expect(await lab.listening(lab.laptop, port)).toBe(false);
  expect(fs.readdirSync(s.laptop.root).filter((n) => n.startsWith('agyctl-connect-'))).toEqual([]);
}

function tokenMode(remote: Sandbox): string {
  return (fs.statSync(path.join(remote.stateDir, 'acp_token.json')).mode & 0o777).toString(8);
}

describe('agyctl connect over a real SSH connection', () => {
  it('logs the remote box in: forward, browser on the laptop, proof on the remote', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child, events } = startConnect(lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json']));
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.names()).toEqual(
      expect.arrayContaining([
        'connected',
        'server-started',
        'url',
        'forward-added',
        'browser-opened',
        'authenticated',
        'forward-removed',
        'verified',
      ]),
    );
    const url = events.find('url')!;
    expect(events.find('forward-added')).toMatchObject({ port: url.port, local: `127.0.0.1:${String(url.port)}` });
    expect(events.find('browser-opened')).toMatchObject({ ok: true });
    expect(events.find('forward-removed')).toMatchObject({ port: url.port, ok: true });
    expect(events.find('verified')).toMatchObject({ tokenFile: { mode: '0600' }, sessionProbe: { removed: true } });
    expect(events.find('error')).toBeUndefined();
    // The browser shim got the URL from xdg-open and reached the remote listener through the forward.
    const shim = shimEntries(s);
    expect(shim[0]).toEqual({ opened: url.url });
    expect(shim[1]).toMatchObject({ status: 200 });
    expect(tokenMode(s.remote)).toBe('600');
    await expectNothingLeft(lab, s, Number(url.port));
  });

  it('prints progress for a person without --json and still logs in', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child } = startConnect(lab, s, connectArgs(lab, remoteAgyctl(s.remote)));
    const result = await child;
    const stdout = String(result.stdout);
    const stderr = String(result.stderr);
    expect(result.exitCode, stderr).toBe(0);
    // The URL stands alone on a stdout line; the summary ends the output.
    expect(stdout.split('\n')).toEqual(
      expect.arrayContaining([expect.stringMatching(/^https:\/\/accounts\.google\.com\/\S+$/)]),
    );
    expect(stdout).toMatch(
      new RegExp(`Logged in on ${DEST}: a fresh server there accepted the credentials .*token file mode 0600`),
    );
    expect(stderr).toMatch(/Connected to root@10\.203\.0\.1/);
    expect(stderr).toMatch(/Forwarding 127\.0\.0\.1:\d+ on this machine/);
    expect(stderr).toMatch(/Signed in \(oauth-personal\)/);
    expect(tokenMode(s.remote)).toBe('600');
    await expectNothingLeft(lab, s);
  });

  it('lets ssh ask for host key confirmation on the terminal, then goes on', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const knownHosts = path.join(s.laptop.root, 'known_hosts');
    // A first connection: empty known_hosts, ssh asks. script(1) gives connect a terminal; "yes" is typed when asked.
    const args = [
      BIN,
      'connect',
      DEST,
      '--remote-agyctl',
      remoteAgyctl(s.remote),
      '--timeout',
      '30s',
      '--ssh-option',
      `IdentityFile=${lab.clientKey}`,
      '--ssh-option',
      `UserKnownHostsFile=${knownHosts}`,
      '--ssh-option',
      'StrictHostKeyChecking=ask',
      '--ssh-option',
      'BatchMode=no',
    ];
    const child = lab.run(lab.laptop, 'script', ['-qec', [NODE, ...args].map(sq).join(' '), '/dev/null'], {
      env: { ...s.laptop.env, TERM: 'dumb' },
      stdin: 'pipe',
      timeoutMs: RUN_MS,
      cwd: s.laptop.root,
    });
    fx.track(child);
    let screen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      if (/\(yes\/no/.test(screen) && !screen.includes('[answered]')) {
        screen += '[answered]';
        child.stdin!.write('yes\n');
      }
    });
    const result = await child;
    expect(result.exitCode, screen).toBe(0);
    expect(screen).toMatch(/The authenticity of host '10\.203\.0\.1/);
    expect(screen).toMatch(/Logged in on root@10\.203\.0\.1/);
    expect(fs.readFileSync(knownHosts, 'utf8')).toMatch(/^10\.203\.0\.1 ssh-ed25519 /);
    expect(tokenMode(s.remote)).toBe('600');
    await expectNothingLeft(lab, s);
  });

  it('falls back to paste-back when the callback port is taken on the laptop', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const port = 47000 + (process.pid % 1000);
    // Another program on the laptop's 127.0.0.1:<port>; it records what the browser requests, like an address bar.
    const seen = path.join(s.laptop.root, 'busy.log');
    const busy = lab.run(
      lab.laptop,
      NODE,
      [
        '-e',
        `require('http').createServer((q,r)=>{require('fs').appendFileSync(${JSON.stringify(seen)}, 'http://127.0.0.1:${port}'+q.url+'\\n');r.end('another program')}).listen(${port},'127.0.0.1')`,
      ],
      { timeoutMs: RUN_MS },
    );
    fx.track(busy);
    await waitUntil(() => lab.listening(lab.laptop, port), 10_000, 'the busy listener');
    const { child, events } = startConnect(
      lab,
      s,
      connectArgs(lab, remoteAgyctl(s.remote, { AGY_SIM_CALLBACK_PORT: String(port) }), ['--json']),
    );
    expect(await events.waitFor('fallback-paste', 20_000)).toMatchObject({
      port,
      reason: expect.stringMatching(/another program is listening/),
    });
    // The browser ended on the busy program's page; that address is what the user pastes.
    await waitUntil(() => fs.existsSync(seen), 10_000, 'the browser to land on the busy port');
    const landed = fs.readFileSync(seen, 'utf8').trim().split('\n')[0]!;
    expect(landed).toMatch(/[?&]code=browser-shim-code/);
    child.stdin!.write(`${landed.replace(/state=[^&]+/, 'state=not-this-login')}\n`);
    expect(await events.waitFor('redirect-rejected', 10_000)).toMatchObject({ reason: expect.stringMatching(/state/) });
    child.stdin!.write(`${landed}\n`);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.find('redirect-delivered')).toMatchObject({ status: 200 });
    expect(events.find('forward-added')).toBeUndefined();
    expect(events.find('verified')).toMatchObject({ tokenFile: { mode: '0600' } });
    expect(tokenMode(s.remote)).toBe('600');
    busy.kill('SIGKILL');
    await busy;
    await expectNothingLeft(lab, s);
  });

  it('says clearly when agyctl is missing on the remote box (exit 4)', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child } = startConnect(lab, s, connectArgs(lab, '/nonexistent/bin/agyctl'));
    const result = await child;
    const stderr = String(result.stderr);
    expect(result.exitCode, stderr).toBe(4);
    expect(stderr).toMatch(
      /error: agyctl could not be run on root@10\.203\.0\.1 as `\/nonexistent\/bin\/agyctl` \(.*not found\)/,
    );
    expect(stderr).toMatch(
      /hint: install it there: the \.deb \(`dpkg -i agyctl_<version>_amd64\.deb`\), the single executable .* or the agyctl\.fleet Ansible role .*--remote-agyctl/,
    );
    expect(stderr).not.toMatch(/npm install|Node >=/);
    await expectNothingLeft(lab, s);
  });

  it("exits 4 with ssh's own message when SSH authentication fails", async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    // No IdentityFile: the lab's ssh config has no key, so the server refuses us.
    const args = connectArgs(lab, remoteAgyctl(s.remote), ['--json']).filter(
      (a, i, all) =>
        !a.startsWith('IdentityFile=') && !(a === '--ssh-option' && all[i + 1]?.startsWith('IdentityFile=')),
    );
    const { child, events } = startConnect(lab, s, args);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(4);
    expect(events.find('error')).toMatchObject({
      code: 'ssh-failed',
      exit: 4,
      message: expect.stringMatching(/Permission denied \(publickey\)/),
    });
    await expectNothingLeft(lab, s);
  });

  it("exits 4 with ssh's own message when sshd is not running", async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    await lab.stopSshd();
    try {
      const { child, events } = startConnect(lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json']));
      const result = await child;
      expect(result.exitCode, String(result.stderr)).toBe(4);
      expect(events.events).toHaveLength(1);
      expect(events.find('error')).toMatchObject({
        code: 'ssh-failed',
        exit: 4,
        message: expect.stringMatching(/Connection refused/),
      });
      await expectNothingLeft(lab, s);
    } finally {
      await lab.startSshd();
    }
  });

  it('Ctrl-C cancels the remote login: exit 130, its server gone, forward and master closed', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child, events } = startConnect(lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json', '--no-open']));
    const forward = await events.waitFor('forward-added', 20_000);
    const serverPid = Number(events.find('server-started')!.pid);
    expect(processesOf(s.remote)).toContain(serverPid);
    const interruptedAt = Date.now();
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    // Cancelled, not abandoned: the remote login stopped its server before connect exited, promptly.
    expect(processesOf(s.remote)).toEqual([]);
    expect(Date.now() - interruptedAt).toBeLessThan(10_000);
    // The remote login reported its own interruption (it got SIGTERM over the master and stopped its server).
    expect(events.find('error')).toMatchObject({ code: 'interrupted', exit: 130 });
    expect(events.names().filter((n) => n === 'error')).toHaveLength(1);
    expect(events.find('browser-opened')).toBeUndefined();
    expect(shimEntries(s)).toEqual([]);
    expect(fs.existsSync(path.join(s.remote.stateDir, 'acp_token.json'))).toBe(false);
    await expectNothingLeft(lab, s, Number(forward.port));
  });
});
