/**
 * What a login says about pasting: a paste after the
 * sign-in arrived through the tunnel gets a word (at the prompt and in
 * `login finish`), `login </dev/null` does not offer "paste it here", a
 * pending login's status names its method, and with stdout piped the URL
 * and the tunnel command still appear under their labels; a method the
 * server does not offer is refused without a settings warning first.
 */
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { httpGet, redirectFor } from '../../helpers/browser.js';
import {
  agyctl,
  BIN,
  makeSandbox,
  parseJson,
  type Sandbox,
  spawnAgyctl,
  waitNoProcesses,
  writeSettings,
} from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  if (!sandbox) return;
  await agyctl(['login', 'cancel'], sandbox);
  expect(await waitNoProcesses(sandbox)).toEqual([]);
  sandbox = undefined;
});

/** Resolves once `text` holds a match, or rejects at the deadline with what was seen. */
function waitForText(stream: NodeJS.ReadableStream, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      stream.off('data', onData);
      reject(new Error(`no ${pattern} within ${timeoutMs} ms; seen: ${seen}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (!pattern.test(seen)) return;
      clearTimeout(timer);
      stream.off('data', onData);
      resolve(seen);
    };
    stream.on('data', onData);
  });
}

const SIGN_IN_URL = /^https:\/\/accounts\.google\.com\/\S+$/m;

describe('login paste wording', () => {
  it('a paste after the tunnel delivered the sign-in says it already arrived', async () => {
    // A slow start-up keeps the proof running long enough to paste into it.
    const sb = makeSandbox({ AGY_SIM_STARTUP_MS: '2500' });
    sandbox = sb;
    const child = spawnAgyctl(['login', '--timeout', '60s'], sb);
    const url = (await waitForText(child.stdout!, SIGN_IN_URL)).match(SIGN_IN_URL)![0];
    const address = redirectFor(url);
    const signedIn = waitForText(child.stderr!, /Signed in \(oauth-personal\)/);
    expect(await httpGet(address)).toBe(200); // the browser, through the tunnel
    await signedIn;
    child.stdin!.write(`${address}\n`);
    const said = await waitForText(child.stderr!, /already arrived/);
    expect(said).toContain('The sign-in already arrived');
    child.stdin!.end();
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(0);
  });

  it('login finish after the tunnel delivered it: already arrived, exit 0, --json alreadySignedIn', async () => {
    const sb = makeSandbox({ AGY_SIM_STARTUP_MS: '2500' });
    sandbox = sb;
    expect((await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb)).exitCode).toBe(0);
    const status = parseJson((await agyctl(['login', 'status', '--json'], sb)).stdout);
    const login = status.login as { url: string; method: unknown };
    expect(login.method).toBe('oauth-personal');
    const address = redirectFor(login.url);
    expect(await httpGet(address)).toBe(200);
    let phase = '';
    for (let i = 0; i < 50 && phase !== 'signed-in'; i++) {
      const s = parseJson((await agyctl(['login', 'status', '--json'], sb)).stdout);
      phase = String((s.login as { phase: string }).phase);
    }
    expect(phase).toBe('signed-in');
    const r = await agyctl(['login', 'finish', address, '--json'], sb);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ ok: true, delivered: false, alreadySignedIn: true });
    expect((await agyctl(['login', 'status', '--wait'], sb)).exitCode).toBe(0);
  });

  it('login </dev/null points at `login finish`, not "paste it here"', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    const child = execa('node', [BIN, 'login', '--timeout', '60s'], {
      env: sb.env,
      extendEnv: false,
      cwd: sb.root,
      reject: false,
      timeout: 45_000,
      stdin: 'ignore',
    });
    const [out, said] = await Promise.all([
      waitForText(child.stdout!, SIGN_IN_URL),
      waitForText(child.stderr!, /No tunnel\?.*\n/),
    ]);
    const url = out.match(SIGN_IN_URL)![0];
    expect(said).toContain('give it to `agyctl login finish` in another shell');
    expect(said).not.toContain('paste it here');
    expect(await httpGet(redirectFor(url))).toBe(200);
    expect((await child).exitCode).toBe(0);
  });
});

describe('login --method', () => {
  it('a method the server does not offer is the one error, with no settings warning before it', async () => {
    const sb = makeSandbox();
    sandbox = sb;
    writeSettings(sb, { auth: { type: 'gemini-api-key' } });
    const r = await agyctl(['login', '--method', 'bogus'], sb);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: This server does not offer the auth method bogus\./);
    expect(r.stderr).not.toContain('warning:');
  });
});
