/**
 * agyctl connect through an sshd that forbids forwarding, with the real
 * sshd of the SSH lab configured each way (AllowTcpForwarding no,
 * DisableForwarding yes, a PermitOpen that does not allow the port, and the
 * default) and Debian's headless Chromium as the laptop's browser
 * (test/helpers/chromium-shim.mjs) following Google's redirect to the
 * laptop's own 127.0.0.1:<port>. sshd accepts `-O forward` in every one of
 * these configurations; only connect's probe tells them apart, and the relay
 * carries the redirect over the SSH session. Nothing is pasted.
 *
 * @module-tag root
 */
import { describe, expect, it } from 'vitest';
import {
  CHROMIUM_SHIM,
  expectNothingLeft,
  NODE,
  remoteAgyctl,
  type Sides,
  shimEntries,
  sides,
  startConnect,
  tokenMode,
} from '../../helpers/connect-lab.js';
import { connectArgs, requireLab, type SshLab, useSshLab } from '../../helpers/netns.js';
import { until } from '../../helpers/until.js';

const fx = useSshLab();
let nextPort = 45000 + (process.pid % 1000) * 4;
/** A fixed callback port per test (one Chromium accepts: not on its list of restricted ports). */
const callbackPort = (): number => {
  nextPort += 1;
  return nextPort;
};
const NO_FORWARDING: Array<[string, string[]]> = [
  ['AllowTcpForwarding no', ['AllowTcpForwarding no']],
  ['DisableForwarding yes', ['DisableForwarding yes']],
  ['a PermitOpen that does not allow the port', ['PermitOpen 127.0.0.1:1']],
];

/** One GET from the laptop namespace: status and page text, or the connection error. */
async function get(
  lab: SshLab,
  url: string,
  host?: string,
): Promise<{ status?: number; page?: string; error?: string }> {
  const script = `const h=require('http');const q=h.get(process.argv[1],{agent:false,timeout:10000,headers:process.argv[2]?{host:process.argv[2]}:{}},(r)=>{let b='';r.on('data',(c)=>b+=c);r.on('end',()=>console.log(JSON.stringify({status:r.statusCode,page:b.replace(/<[^>]+>/g,' ').replace(/\\s+/g,' ').trim()})))});q.on('error',(e)=>console.log(JSON.stringify({error:e.code||e.message})))`;
  const r = await lab.run(lab.laptop, NODE, ['-e', script, url, host ?? ''], { timeoutMs: 15_000 });
  return JSON.parse(String(r.stdout)) as { status?: number; page?: string; error?: string };
}

/** connect to the lab's remote, its sshd restarted with `sshd` lines, the simulator's callback on a fixed port. */
async function connectThrough(lab: SshLab, sshd: string[], extra: string[], shim?: string) {
  await lab.configureSshd(sshd);
  const s = sides(lab, shim);
  const port = callbackPort();
  const args = connectArgs(lab, remoteAgyctl(s.remote, { AGY_SIM_CALLBACK_PORT: String(port) }), extra);
  return { s, port, ...startConnect(fx, lab, s, args) };
}

/** What Chromium printed of the page it ended on (it may still be writing it when connect has finished). */
async function browserPage(s: Sides): Promise<Record<string, unknown> | undefined> {
  await until('Chromium to finish', 20_000, () => shimEntries(s).some((e) => 'page' in e));
  return shimEntries(s).find((e) => 'page' in e);
}

describe('agyctl connect when the SSH server forbids forwarding', () => {
  it.for(NO_FORWARDING)('with %s: relays the browser redirect over the session, no paste', async ([, sshd], ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const { s, port, child, events } = await connectThrough(lab, sshd, ['--json'], CHROMIUM_SHIM);
    const result = await child;
    const output = `${String(result.stdout)}${String(result.stderr)}`;
    expect(result.exitCode, output).toBe(0);
    expect(events.find('route')).toMatchObject({
      route: 'relay',
      port,
      reason: expect.stringMatching(/does not let a connection through a forward of port \d+ \(.*refused/),
    });
    expect(events.find('relay-listening')).toMatchObject({ port, local: `127.0.0.1:${port}` });
    expect(events.find('forward-added')).toBeUndefined();
    expect(events.find('redirect-delivered')).toMatchObject({ status: 200 });
    expect(events.find('relay-refused')).toBeUndefined();
    expect(events.find('relay-closed')).toMatchObject({ port });
    expect(events.find('verified')).toMatchObject({ tokenFile: { mode: '0600' } });
    // Chromium followed the redirect to the laptop's port and got the relay's page.
    const browser = await browserPage(s);
    expect(browser).toMatchObject({ exit: 0, page: expect.stringMatching(/Sign-in went through/) });
    // The code travelled, and was never shown.
    expect(output).not.toMatch(/chromium-shim-code/);
    expect(tokenMode(s.remote)).toBe('600');
    await expectNothingLeft(lab, s, port);
  });

  it('with the default sshd: the probe lets the forward through and Chromium reaches the remote listener', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const { s, port, child, events } = await connectThrough(lab, [], ['--json'], CHROMIUM_SHIM);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.find('route')).toMatchObject({ route: 'forward', port, reason: null });
    expect(events.find('relay-listening')).toBeUndefined();
    expect(events.find('redirect-delivered')).toBeUndefined();
    // The page is the remote server's own (the simulator's), through the forward.
    expect(await browserPage(s)).toMatchObject({
      exit: 0,
      page: expect.stringMatching(/Authentication successful/),
    });
    await expectNothingLeft(lab, s, port);
  });

  it('says the route for a person, and that the redirect was relayed', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const { s, port, child } = await connectThrough(lab, ['DisableForwarding yes'], [], CHROMIUM_SHIM);
    const result = await child;
    const stderr = String(result.stderr);
    expect(result.exitCode, stderr).toBe(0);
    expect(stderr).toMatch(
      new RegExp(
        `relaying the browser's redirect over the SSH session instead \\(listening on 127\\.0\\.0\\.1:${port}`,
      ),
    );
    expect(stderr).toMatch(/The browser's redirect was relayed to the remote login \(HTTP 200\)/);
    expect(String(result.stdout)).toMatch(/Logged in on root@10\.203\.0\.1/);
    await expectNothingLeft(lab, s, port);
  });

  it('answers hostile requests itself, relays only the callback of this login, then stops listening', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const { s, port, child, events } = await connectThrough(lab, ['AllowTcpForwarding no'], ['--json', '--no-open']);
    await events.waitFor('relay-listening', 20_000);
    const state = new URL(String(events.find('url')!.url)).searchParams.get('state')!;
    const base = `http://127.0.0.1:${port}`;
    const hostile: Array<[string, string, string | undefined, RegExp]> = [
      ['wrong path', `${base}/other?code=c&state=${state}`, undefined, /path \/other is not \//],
      ['wrong state', `${base}/?code=c&state=not-this-login`, undefined, /state does not match/],
      ['no code', `${base}/?state=${state}`, undefined, /no code/],
      ['GET / (would abort the login)', `${base}/`, undefined, /no code/],
      ['another Host (DNS rebinding)', `${base}/?code=c&state=${state}`, `evil.example:${port}`, /Host header/],
    ];
    for (const [name, url, host, reason] of hostile) {
      const r = await get(lab, url, host);
      expect(r, name).toMatchObject({ status: 400, page: expect.stringMatching(reason) });
    }
    await until(
      'a relay-refused event per hostile request',
      5_000,
      () => events.names().filter((n) => n === 'relay-refused').length === hostile.length,
    );
    // None of them reached the remote login: it neither rejected nor received anything, and still waits.
    expect(events.find('redirect-rejected')).toBeUndefined();
    expect(events.find('redirect-delivered')).toBeUndefined();
    expect(child.exitCode).toBeNull();
    // The one callback of this login goes through.
    const good = await get(lab, `${base}/?code=good-code&state=${state}`);
    expect(good).toMatchObject({ status: 200, page: expect.stringMatching(/Sign-in went through/) });
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(events.find('redirect-delivered')).toMatchObject({ status: 200 });
    expect(String(result.stdout)).not.toMatch(/good-code/);
    // The listener is gone once the login ended: nothing answers on the port any more.
    expect(await get(lab, `${base}/?code=late&state=${state}`)).toEqual({ error: 'ECONNREFUSED' });
    await expectNothingLeft(lab, s, port);
  });

  it('Ctrl-C while the relay listens: exit 130, the listener and the remote login gone', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const { s, port, child, events } = await connectThrough(lab, ['DisableForwarding yes'], ['--json', '--no-open']);
    await events.waitFor('relay-listening', 20_000);
    expect(await lab.listening(lab.laptop, port)).toBe(true);
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    expect(events.find('relay-closed')).toMatchObject({ port });
    await expectNothingLeft(lab, s, port);
  });
});
