/**
 * A dropped SSH session no longer loses the login (real sshd in network
 * namespaces, test/helpers/netns.ts): `agyctl login` runs over `ssh -tt` in
 * a pty on the "laptop", the ssh client is killed mid-login, and a new SSH
 * session finds the login pending on the same port; a new tunnel carries
 * the redirect and status reports success. And `agyctl connect` whose
 * control master is killed once mid-login reconnects and finishes on its
 * own. Leftovers are checked on these namespaces' and sandboxes' processes.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { redirectFor } from '../../helpers/browser.js';
import { BIN, makeSandbox, processesOf, type Sandbox, SIM } from '../../helpers/cli.js';
import { EventStream } from '../../helpers/ndjson.js';
import { connectArgs, DEST, labSettled, requireLab, type SshLab, useSshLab } from '../../helpers/netns.js';
import { killGroup, LAB_POLL_MS } from '../../helpers/ns-lab.js';
import { until } from '../../helpers/until.js';

const NODE = process.execPath;
const RUN_MS = 60_000;
const GET = `require('http').get(process.argv[1], (r) => { r.resume(); r.on('end', () => console.log(r.statusCode)); }).on('error', (e) => { console.log('error ' + e.message); process.exitCode = 1; })`;

const fx = useSshLab();

const sq = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

/** A script on the shared filesystem that runs the built agyctl with the remote sandbox's HOME and the simulator. */
function remoteAgyctlScript(remote: Sandbox): string {
  const file = path.join(remote.root, 'agy.sh');
  const vars = { HOME: remote.home, TMPDIR: remote.root, NO_COLOR: '1', AGYCTL_SERVER: `${NODE} ${SIM}` };
  fs.writeFileSync(
    file,
    `#!/bin/sh\n${Object.entries(vars)
      .map(([k, v]) => `export ${k}=${sq(v)}`)
      .join('\n')}\nexec ${NODE} ${BIN} "$@"\n`,
    { mode: 0o755 },
  );
  return file;
}

/** NDJSON events out of a pty transcript: prompts and \r may share a line with an event. */
function ptyEvents(text: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    const at = line.indexOf('{"event"');
    if (at < 0) continue;
    try {
      found.push(JSON.parse(line.slice(at).replace(/\r$/, '')) as Record<string, unknown>);
    } catch {
      /* partial */
    }
  }
  return found;
}

async function ssh(lab: SshLab, args: string[], timeoutMs = RUN_MS) {
  return lab.run(lab.laptop, 'ssh', [DEST, ...args], {
    env: { PATH: `${lab.sshFullBin}:${process.env.PATH}` },
    timeoutMs,
  });
}

async function nothingLeft(lab: SshLab, remote: Sandbox): Promise<void> {
  await labSettled(lab, 15_000);
  expect(processesOf(remote)).toEqual([]);
}

describe('a dropped SSH session during agyctl login', () => {
  it('the login survives: a new session sees it pending on the same port, a new tunnel carries the redirect, status reports success', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const remote = makeSandbox();
    const agy = remoteAgyctlScript(remote);
    // ssh -tt in a pty (script), as a person's terminal would run it.
    const session = lab.run(
      lab.laptop,
      'script',
      ['-qfc', `ssh -tt ${DEST} ${agy} login --json --timeout 60s`, '/dev/null'],
      {
        env: { PATH: `${lab.sshFullBin}:${process.env.PATH}`, TERM: 'dumb' },
        stdin: 'pipe',
        timeoutMs: RUN_MS,
        detached: true,
      },
    );
    fx.track(session);
    let transcript = '';
    session.stdout!.on('data', (b: Buffer) => (transcript += b.toString()));
    await until('the remote login to wait for the browser', 30_000, () =>
      ptyEvents(transcript).some((e) => e.event === 'waiting'),
    );
    const url = ptyEvents(transcript).find((e) => e.event === 'url')!;
    const port = Number(url.port);

    killGroup(session, 'SIGKILL'); // the laptop's ssh client dies: the connection drops mid-login
    await session;

    const status = await ssh(lab, [agy, 'login', 'status', '--json']);
    expect(status.exitCode, String(status.stderr)).toBe(0);
    const login = (JSON.parse(String(status.stdout)) as { login: Record<string, unknown> }).login;
    expect(login).toMatchObject({ status: 'pending', port, url: url.url });
    expect(await lab.listening(lab.remote, port)).toBe(true);

    const tunnel = lab.run(
      lab.laptop,
      'ssh',
      ['-N', '-L', `${port}:127.0.0.1:${port}`, '-o', 'ExitOnForwardFailure=yes', DEST],
      { env: { PATH: `${lab.sshFullBin}:${process.env.PATH}` }, timeoutMs: RUN_MS, detached: true },
    );
    fx.track(tunnel);
    await until(
      `the new tunnel on the laptop's port ${port}`,
      10_000,
      () => lab.listening(lab.laptop, port),
      LAB_POLL_MS,
    );
    const browser = await lab.run(lab.laptop, NODE, ['-e', GET, redirectFor(String(url.url))], { timeoutMs: 15_000 });
    expect(String(browser.stdout).trim(), String(browser.stderr)).toBe('200');

    const done = await ssh(lab, [agy, 'login', 'status', '--wait', '--json']);
    expect(done.exitCode, String(done.stderr)).toBe(0);
    expect(JSON.parse(String(done.stdout))).toMatchObject({ login: { status: 'succeeded', outcome: { exit: 0 } } });
    expect((fs.statSync(path.join(remote.stateDir, 'acp_token.json')).mode & 0o777).toString(8)).toBe('600');

    killGroup(tunnel, 'SIGTERM');
    await tunnel;
    await nothingLeft(lab, remote);
    expect(fs.readdirSync(remote.root).filter((f) => f.startsWith('agyctl-login-'))).toEqual([]);
  });
});

/** `agyctl connect` on the laptop to the lab's remote (its own sandboxes), its events streamed; waits for the forward. */
async function startConnect(lab: SshLab, timeout: string, routeEvent = 'forward-added') {
  const remote = makeSandbox();
  const laptop = makeSandbox();
  laptop.env = { ...laptop.env, PATH: `${lab.sshBareBin}:${process.env.PATH}` };
  const agy = remoteAgyctlScript(remote);
  const args = connectArgs(lab, agy, ['--json', '--no-open'], timeout);
  const child = fx.track(
    lab.run(lab.laptop, NODE, [BIN, ...args], { env: laptop.env, stdin: 'pipe', timeoutMs: 90_000, cwd: laptop.root }),
  );
  const events = new EventStream(child.stdout!);
  await events.waitFor(routeEvent, 30_000);
  const url = events.find('url')!;
  return { remote, laptop, agy, child, events, url, port: Number(url.port) };
}

/** connect's control masters (ssh -M) running on the laptop. */
async function controlMasters(lab: SshLab): Promise<number[]> {
  return (await lab.pids(lab.laptop)).filter((pid) => {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv.includes('-M') && argv.includes('ClearAllForwardings=yes');
    } catch {
      return false;
    }
  });
}

/** Cut the connection (kill connect's control master, the ssh -M process, on the laptop); wait for the route on the new master. */
async function dropAndReconnect(lab: SshLab, events: EventStream, routeEvent: string): Promise<void> {
  const masters = await controlMasters(lab);
  expect(masters).toHaveLength(1);
  process.kill(masters[0]!, 'SIGKILL');
  await events.waitFor('reconnected', 45_000);
  await until(
    `${routeEvent} on the new master`,
    15_000,
    () => events.events.filter((e) => e.event === routeEvent).length === 2,
  );
}

describe('agyctl connect when its connection drops once', () => {
  it('reconnects, forwards the same port again, and finishes on its own', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const { remote, laptop, child, events, url, port } = await startConnect(lab, '60s');

    await dropAndReconnect(lab, events, 'forward-added');
    expect(events.events.filter((e) => e.event === 'forward-added').at(-1)).toMatchObject({ port });
    const browser = await lab.run(lab.laptop, NODE, ['-e', GET, redirectFor(String(url.url))], { timeoutMs: 15_000 });
    expect(String(browser.stdout).trim(), String(browser.stderr)).toBe('200');

    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.names()).toEqual(expect.arrayContaining(['connection-lost', 'reconnected']));
    expect(events.events.at(-1)).toMatchObject({ event: 'verified', resumed: true });
    await nothingLeft(lab, remote);
    expect(processesOf(laptop)).toEqual([]);
    expect(fs.readdirSync(laptop.root).filter((n) => n.startsWith('agyctl-connect-'))).toEqual([]);
  });

  it('with an sshd that forbids forwarding: the relay listens again after the reconnect and carries the redirect', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    await lab.configureSshd(['AllowTcpForwarding no']);
    try {
      const { remote, laptop, child, events, url, port } = await startConnect(lab, '60s', 'relay-listening');
      await dropAndReconnect(lab, events, 'relay-listening');
      expect(events.events.filter((e) => e.event === 'route').at(-1)).toMatchObject({ route: 'relay', port });
      expect(events.find('forward-added')).toBeUndefined();
      const browser = await lab.run(lab.laptop, NODE, ['-e', GET, redirectFor(String(url.url))], {
        timeoutMs: 15_000,
      });
      expect(String(browser.stdout).trim(), String(browser.stderr)).toBe('200');

      const result = await child;
      expect(result.exitCode, String(result.stderr)).toBe(0);
      expect(events.events.at(-1)).toMatchObject({ event: 'verified', resumed: true });
      // Both listeners closed: the first with the dropped session, the second after the delivery.
      expect(events.events.filter((e) => e.event === 'relay-closed')).toEqual([
        { event: 'relay-closed', port },
        { event: 'relay-closed', port },
      ]);
      expect(await lab.listening(lab.laptop, port)).toBe(false);
      await nothingLeft(lab, remote);
      expect(processesOf(laptop)).toEqual([]);
    } finally {
      await lab.configureSshd([]);
    }
  });

  it('when it cannot get back before the deadline: exit 4 with the exact commands to resume by hand', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const { remote, laptop, agy, child, events, port } = await startConnect(lab, '8s');
    try {
      await lab.stopSshd(); // nothing to reconnect to
      for (const pid of await controlMasters(lab)) process.kill(pid, 'SIGKILL');
      const result = await child;
      expect(result.exitCode, String(result.stderr)).toBe(4);
      const error = events.events.at(-1)!;
      expect(error).toMatchObject({ event: 'error', code: 'ssh-failed' });
      expect(String(error.hint)).toContain(`-N -L ${port}:127.0.0.1:${port}`);
      expect(String(error.hint)).toContain(`${agy} login finish`);
      expect(String(error.hint)).toContain(`${agy} login status --wait`);
      expect(events.names()).toContain('connection-lost');
    } finally {
      await lab.startSshd();
    }
    // The remote login ends at its own deadline (exit 5), and nothing is left behind.
    await until(
      'the remote login to end at its deadline',
      30_000,
      () => {
        try {
          return (
            JSON.parse(
              fs.readFileSync(
                path.join(
                  remote.home,
                  '.local',
                  'state',
                  'agyctl',
                  'logins',
                  fs.readdirSync(path.join(remote.home, '.local', 'state', 'agyctl', 'logins'))[0]!,
                  'state.json',
                ),
                'utf8',
              ),
            ).outcome?.exit === 5
          );
        } catch {
          return false;
        }
      },
      LAB_POLL_MS,
    );
    await nothingLeft(lab, remote);
    expect(processesOf(laptop)).toEqual([]);
  });
});
