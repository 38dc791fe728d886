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
import { agyctl, BIN, parseJson, processesOf } from '../../helpers/cli.js';
import {
  expectNothingLeft,
  NODE,
  RUN_MS,
  remoteAgyctl,
  type Sides,
  shimEntries,
  sides,
  sq,
  startConnect,
  tokenMode,
} from '../../helpers/connect-lab.js';
import { connectArgs, DEST, requireLab, type SshLab, useSshLab } from '../../helpers/netns.js';
import { killGroup, LAB_POLL_MS } from '../../helpers/ns-lab.js';
import { until } from '../../helpers/until.js';

const fx = useSshLab();

/** Another program on the laptop's 127.0.0.1:<port> (the port the remote login will use); it records what the browser requests, like an address bar. */
async function busyCallbackPort(
  lab: SshLab,
  s: Sides,
): Promise<{ port: number; seen: string; stop: () => Promise<void> }> {
  const port = 47000 + (process.pid % 1000);
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
  await until('the busy listener', 10_000, () => lab.listening(lab.laptop, port), LAB_POLL_MS);
  const stop = async (): Promise<void> => {
    busy.kill('SIGKILL');
    await busy;
  };
  return { port, seen, stop };
}

/** connect with stdin at /dev/null (a cron job, a script) and no browser, run to its end. */
function connectWithoutStdin(lab: SshLab, s: Sides, remote: string, timeout: string): ResultPromise {
  const child = lab.run(lab.laptop, NODE, [BIN, ...connectArgs(lab, remote, ['--no-open'], timeout)], {
    env: s.laptop.env,
    stdin: 'ignore',
    timeoutMs: RUN_MS,
    cwd: s.laptop.root,
  });
  fx.track(child);
  return child;
}
describe('agyctl connect over a real SSH connection', () => {
  it('logs the remote box in: forward, browser on the laptop, proof on the remote', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child, events } = startConnect(fx, lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json']));
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
    // sshd lets a connection through (the -W probe), so the route is the forward.
    expect(events.find('route')).toMatchObject({ route: 'forward', port: url.port, reason: null });
    expect(events.find('relay-listening')).toBeUndefined();
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

  it('checks the box first: working credentials are left as they are (exit 0), --force signs in again', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const first = await startConnect(fx, lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json'])).child;
    expect(first.exitCode, String(first.stderr)).toBe(0);
    const token = path.join(s.remote.stateDir, 'acp_token.json');
    const before = fs.readFileSync(token);
    const beforeIno = fs.statSync(token).ino;

    const again = startConnect(fx, lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json']));
    const second = await again.child;
    expect(second.exitCode, String(second.stderr)).toBe(0);
    expect(again.events.find('checked')).toMatchObject({ status: 'ok', exit: 0 });
    expect(again.events.names().at(-1)).toBe('already-signed-in');
    expect(again.events.find('url')).toBeUndefined();
    expect(fs.readFileSync(token).equals(before)).toBe(true);
    expect(fs.statSync(token).ino).toBe(beforeIno);

    const text = await startConnect(fx, lab, s, connectArgs(lab, remoteAgyctl(s.remote))).child;
    expect(text.exitCode).toBe(0);
    expect(String(text.stdout)).toMatch(/is already signed in \(agyctl check --live passed there\); nothing changed/);

    const forced = startConnect(fx, lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json', '--force']));
    expect((await forced.child).exitCode).toBe(0);
    expect(forced.events.find('verified')).toBeDefined();
    expect(forced.events.find('checked')).toBeUndefined();
    await expectNothingLeft(lab, s);
  });

  it('prints progress for a person without --json and still logs in', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child } = startConnect(fx, lab, s, connectArgs(lab, remoteAgyctl(s.remote)));
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
    const { port, seen, stop } = await busyCallbackPort(lab, s);
    const { child, events } = startConnect(
      fx,
      lab,
      s,
      connectArgs(lab, remoteAgyctl(s.remote, { AGY_SIM_CALLBACK_PORT: String(port) }), ['--json']),
    );
    expect(await events.waitFor('fallback-paste', 20_000)).toMatchObject({
      port,
      reason: expect.stringMatching(/another program is listening/),
    });
    // The browser ended on the busy program's page; that address is what the user pastes.
    await until('the browser to land on the busy port', 10_000, () => fs.existsSync(seen));
    const landed = fs.readFileSync(seen, 'utf8').trim().split('\n')[0]!;
    expect(landed).toMatch(/[?&]code=browser-shim-code/);
    child.stdin!.write(`${landed.replace(/state=[^&]+/, 'state=not-this-login')}\n`);
    expect(await events.waitFor('redirect-rejected', 10_000)).toMatchObject({ reason: expect.stringMatching(/state/) });
    child.stdin!.write(`${landed}\n`);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.find('redirect-delivered')).toMatchObject({ status: 200 });
    expect(events.find('forward-added')).toBeUndefined();
    expect(events.find('route')).toMatchObject({ route: 'paste', port });
    expect(events.find('verified')).toMatchObject({ tokenFile: { mode: '0600' } });
    expect(tokenMode(s.remote)).toBe('600');
    await stop();
    await expectNothingLeft(lab, s);
  });

  it('on a terminal, the paste prompt is drawn again after a refused paste, not after a delivered one', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { port, seen, stop } = await busyCallbackPort(lab, s);
    const args = [BIN, ...connectArgs(lab, remoteAgyctl(s.remote, { AGY_SIM_CALLBACK_PORT: String(port) }))];
    const child = lab.run(
      lab.laptop,
      'script',
      ['-qec', `stty cols 200; ${[NODE, ...args].map(sq).join(' ')}`, '/dev/null'],
      {
        env: { ...s.laptop.env, NO_COLOR: '1' },
        stdin: 'pipe',
        timeoutMs: RUN_MS,
        cwd: s.laptop.root,
      },
    );
    fx.track(child);
    let screen = '';
    const PROMPT = 'paste the address your browser ended on> ';
    const prompts = (text: string): number => text.split(PROMPT).length - 1;
    const shown = (what: () => boolean, label: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const look = (): void => {
          if (what()) resolve();
        };
        child.stdout!.on('data', (chunk: Buffer) => {
          screen += chunk.toString();
          look();
        });
        void child.then(() => reject(new Error(`never shown: ${label}\n${screen}`)));
        look();
      });
    await shown(() => screen.includes(PROMPT), 'the paste prompt');
    await until('the browser to land on the busy port', 10_000, () => fs.existsSync(seen));
    const landed = fs.readFileSync(seen, 'utf8').trim().split('\n')[0]!;
    const refusedAt = screen.length;
    child.stdin!.write(`${landed.replace(/state=[^&]+/, 'state=not-this-login')}\r`);
    await shown(() => /state/i.test(screen.slice(refusedAt)) && prompts(screen.slice(refusedAt)) >= 1, 'a new prompt');
    const deliveredAt = screen.length;
    child.stdin!.write(`${landed}\r`);
    const result = await child;
    expect(result.exitCode, screen).toBe(0);
    const after = screen.slice(deliveredAt);
    expect(after).toMatch(/Logged in on root@10\.203\.0\.1/);
    expect(prompts(after), after).toBe(0);
    expect(screen).not.toContain('\x1b');
    await stop();
    await expectNothingLeft(lab, s);
  });

  it('a device page from the remote login is shown as it is: no forward, no relay, no paste', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const remote = remoteAgyctl(s.remote, { AGY_SIM_ELICITATION: 'only', AGY_SIM_ELICITATION_PAGE: 'device' });
    const { child, events } = startConnect(fx, lab, s, connectArgs(lab, remote, ['--json', '--no-open']));
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.find('url')).toMatchObject({
      mode: 'device',
      url: expect.stringMatching(/^https:\/\/www\.google\.com\/device/),
    });
    expect(events.find('url-rejected')).toBeUndefined();
    expect(events.find('route')).toBeUndefined();
    expect(events.find('forward-added')).toBeUndefined();
    expect(events.find('verified')).toMatchObject({ tokenFile: { mode: '0600' } });
    await expectNothingLeft(lab, s);
  });

  it('with stdin at /dev/null and no forward, it stops at once (exit 2) instead of waiting for a paste it cannot read', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { port, stop } = await busyCallbackPort(lab, s);
    const started = Date.now();
    const result = await connectWithoutStdin(
      lab,
      s,
      remoteAgyctl(s.remote, { AGY_SIM_CALLBACK_PORT: String(port) }),
      '5min',
    );
    expect(result.exitCode, String(result.stderr)).toBe(2);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(String(result.stderr)).toMatch(/stdin is closed, so the address your browser ends on cannot be pasted/);
    expect(String(result.stderr)).toMatch(/hint: run `agyctl connect /);
    await stop();
    await expectNothingLeft(lab, s);
  });

  it("the remote login's timeout hint names connect, the command the user ran", async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const result = await connectWithoutStdin(lab, s, remoteAgyctl(s.remote), '3s');
    expect(result.exitCode, String(result.stderr)).toBe(5);
    expect(String(result.stderr)).toMatch(/hint: run `agyctl connect \S+ --timeout 20m`/);
    expect(String(result.stderr)).not.toMatch(/agyctl login --timeout/);
    await expectNothingLeft(lab, s);
  });

  it('says clearly when agyctl is missing on the remote box (exit 4)', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child } = startConnect(fx, lab, s, connectArgs(lab, '/nonexistent/bin/agyctl'));
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
    const { child, events } = startConnect(fx, lab, s, args);
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
      const { child, events } = startConnect(fx, lab, s, connectArgs(lab, remoteAgyctl(s.remote), ['--json']));
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
    const { child, events } = startConnect(
      fx,
      lab,
      s,
      connectArgs(lab, remoteAgyctl(s.remote), ['--json', '--no-open']),
    );
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

  it('a SIGTERM to its whole process group (timeout 20 agyctl connect) still cancels the remote login', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    const { child, events } = startConnect(
      fx,
      lab,
      s,
      connectArgs(lab, remoteAgyctl(s.remote), ['--json', '--no-open']),
      { detached: true },
    );
    const forward = await events.waitFor('forward-added', 20_000);
    const serverPid = Number(events.find('server-started')!.pid);
    expect(processesOf(s.remote)).toContain(serverPid);
    // What `timeout` does: the signal goes to every process of the group, ssh's master included.
    killGroup(child, 'SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    expect(events.find('error')).toMatchObject({ code: 'interrupted', exit: 130 });
    // Cancelled on the box, not left pending with its server for the login's 10 minutes.
    expect(processesOf(s.remote)).toEqual([]);
    const status = await agyctl(['login', 'status', '--json'], s.remote);
    expect((parseJson(status.stdout) as any).login?.status ?? 'none').not.toBe('pending');
    await expectNothingLeft(lab, s, Number(forward.port));
  });

  it('killed outright with its ssh (SIGKILL to the group), the remote login cancels itself once its session is gone', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const s = sides(lab);
    // The grace connect gives its remote login (2min) shortened, as the remote's own environment may.
    const remote = remoteAgyctl(s.remote, { AGYCTL_LOGIN_ORPHAN_GRACE: '2s' });
    const { child, events } = startConnect(fx, lab, s, connectArgs(lab, remote, ['--json', '--no-open'], '10m'), {
      detached: true,
    });
    const forward = await events.waitFor('forward-added', 20_000);
    const serverPid = Number(events.find('server-started')!.pid);
    expect(processesOf(s.remote)).toContain(serverPid);
    // Nothing on the laptop can cancel anything now: connect and its ssh master die at once.
    killGroup(child, 'SIGKILL');
    await child.catch(() => undefined);
    // The remote login's attached side leaves when its session's pipe breaks (at its next event, within 15 s);
    // then, with no one asking after the login for the grace, it cancels itself and stops its server.
    await until('the remote login and its server to end', 40_000, () => processesOf(s.remote).length === 0);
    const status = await agyctl(['login', 'status', '--json'], s.remote);
    const login = (parseJson(status.stdout) as { login?: { status?: string } }).login;
    expect(login?.status, status.stdout).not.toBe('pending');
    expect(status.stdout).toMatch(/cancel/i);
    expect(fs.existsSync(path.join(s.remote.stateDir, 'acp_token.json'))).toBe(false);
    // The remote side is clean; on the laptop a SIGKILLed connect cannot remove its control socket's directory.
    expect(processesOf(s.remote)).toEqual([]);
    expect(processesOf(s.laptop)).toEqual([]);
    expect(await lab.listening(lab.laptop, Number(forward.port))).toBe(false);
  });
});
