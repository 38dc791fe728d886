/**
 * agyctl login's printed tunnel command, run for real: agyctl login and the
 * simulator run in the "remote" namespace; the "laptop" namespace runs the
 * tunnel command exactly as printed and delivers the browser's redirect
 * through the forwarded 127.0.0.1:<port> on the laptop.
 *
 * How the target is substituted: login derives it from SSH_CONNECTION, as in
 * a real SSH session to the box, so the test gives login
 * SSH_CONNECTION="10.203.0.2 50022 10.203.0.1 22" and USER=root and the
 * printed command already ends in root@10.203.0.1; the test asserts the
 * whole line. The laptop runs that line verbatim with `sh -c`, with a PATH
 * whose first `ssh` is a wrapper adding `-F <lab config>` (the throwaway
 * client key, the lab's known_hosts, BatchMode): nothing else is added.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeSandbox, processesOf } from '../../helpers/cli.js';
import { EventStream } from '../../helpers/ndjson.js';
import { LAPTOP_ADDR, labSettled, REMOTE_ADDR, requireLab, useSshLab } from '../../helpers/netns.js';
import { killGroup, LAB_POLL_MS } from '../../helpers/ns-lab.js';
import { until } from '../../helpers/until.js';

const NODE = process.execPath;
const RUN_MS = 45_000;

const fx = useSshLab();

/** The browser's request after Google's redirect, sent from inside the laptop namespace. */
const GET = `require('http').get(process.argv[1], (r) => { r.resume(); r.on('end', () => console.log(r.statusCode)); }).on('error', (e) => { console.log('error ' + e.message); process.exitCode = 1; })`;

describe('agyctl login through a real SSH tunnel', () => {
  it('the printed tunnel command, run on the laptop, carries the redirect to the remote login', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const remote = makeSandbox({ USER: 'root', SSH_CONNECTION: `${LAPTOP_ADDR} 50022 ${REMOTE_ADDR} 22` });
    const login = lab.run(lab.remote, NODE, [BIN, 'login', '--json', '--timeout', '30s'], {
      env: remote.env,
      stdin: 'pipe',
      timeoutMs: RUN_MS,
      cwd: remote.root,
    });
    fx.track(login);
    const events = new EventStream(login.stdout!);
    const url = await events.waitFor('url', 20_000);
    const port = Number(url.port);
    const tunnel = String(url.tunnel);
    expect(tunnel).toBe(`ssh -N -L ${port}:127.0.0.1:${port} -o ExitOnForwardFailure=yes -- root@${REMOTE_ADDR}`);
    // Nothing on the laptop answers on that port before the tunnel exists.
    expect(await lab.listening(lab.laptop, port)).toBe(false);

    const tunnelProc = lab.run(lab.laptop, 'sh', ['-c', tunnel], {
      env: { PATH: `${lab.sshFullBin}:${process.env.PATH}`, HOME: remote.root },
      timeoutMs: RUN_MS,
      detached: true,
    });
    fx.track(tunnelProc);
    await until(
      `the tunnel to listen on the laptop's port ${port}`,
      10_000,
      () => lab.listening(lab.laptop, port),
      LAB_POLL_MS,
    );

    const auth = new URL(String(url.url));
    const redirect = new URL(String(auth.searchParams.get('redirect_uri')));
    redirect.searchParams.set('code', 'tunnel-test-code');
    redirect.searchParams.set('state', String(auth.searchParams.get('state')));
    const browser = await lab.run(lab.laptop, NODE, ['-e', GET, redirect.toString()], { timeoutMs: 15_000 });
    expect(String(browser.stdout).trim(), String(browser.stderr)).toBe('200');

    const result = await login;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.find('authenticated')).toBeDefined();
    expect(events.find('verified')).toMatchObject({ tokenFile: { mode: '0600' } });
    expect((fs.statSync(path.join(remote.stateDir, 'acp_token.json')).mode & 0o777).toString(8)).toBe('600');

    killGroup(tunnelProc, 'SIGTERM');
    await tunnelProc;
    await labSettled(lab, 10_000);
    expect(processesOf(remote)).toEqual([]);
  });
});
