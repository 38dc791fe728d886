/**
 * A detached gemini-cli code-entry login (the real gemini-cli, with a fake
 * Google behind a proxy): `login finish` delivers the code to the pending
 * login from another process, with the same checks as a paste at the
 * prompt, and the code appears in no output and not in the login record.
 *
 * @module-tag gemini-cli
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, parseEvents, parseJson, waitNoProcesses } from '../../helpers/cli.js';
import { FAKE, useFakeGoogle } from '../../helpers/fake-google.js';
import { type GeminiSandbox, makeGeminiSandbox } from '../../helpers/gemini.js';

const google = useFakeGoogle();
let sandbox: GeminiSandbox | undefined;

afterEach(async () => {
  if (sandbox) await agyctl(['login', 'cancel', '--profile', 'gemini-cli'], sandbox);
  sandbox = undefined;
});

describe('detached code-entry login (gemini-cli)', () => {
  it('login finish CODE (stdin) sends the code; a malformed one is refused; status --wait exits 0; the code is nowhere', async () => {
    sandbox = makeGeminiSandbox({ HTTPS_PROXY: google().proxyUrl, NODE_EXTRA_CA_CERTS: google().caFile });
    const sb = sandbox;
    const detached = await agyctl(
      ['login', '--detach', '--json', '--profile', 'gemini-cli', '--no-fake-display', '--timeout', '90s'],
      sb,
      { timeoutMs: 120_000 },
    );
    expect(detached.exitCode, detached.stderr).toBe(0);
    const events = parseEvents(detached.stdout);
    expect(events.find((e) => e.event === 'url')).toMatchObject({ mode: 'code-entry' });
    expect(events.at(-1)).toMatchObject({ event: 'detached', port: null, tunnel: null });

    const bad = await agyctl(['login', 'finish', '--profile', 'gemini-cli', '--json'], sb, { input: 'not a code\n' });
    expect(bad.exitCode).toBe(2);
    expect(parseJson(bad.stdout).error).toMatchObject({
      code: 'redirect-rejected',
      message: expect.stringMatching(/spaces/),
    });

    const finish = await agyctl(['login', 'finish', '--profile', 'gemini-cli'], sb, { input: `${FAKE.code}\n` });
    expect(finish.exitCode, finish.stderr).toBe(0);
    expect(finish.stdout).toContain('Sent the code');
    const done = await agyctl(['login', 'status', '--wait', '--json', '--profile', 'gemini-cli'], sb, {
      timeoutMs: 150_000,
    });
    expect(done.exitCode, done.stderr).toBe(0);
    expect(parseJson(done.stdout)).toMatchObject({ login: { status: 'succeeded' } });
    expect(fs.statSync(sb.tokenFile).mode & 0o777).toBe(0o600);

    const record = path.join(sb.home, '.local', 'state', 'agyctl', 'logins');
    const stored = fs
      .readdirSync(record)
      .flatMap((d) =>
        fs.readdirSync(path.join(record, d)).map((f) => fs.readFileSync(path.join(record, d, f), 'utf8')),
      );
    for (const text of [detached.stdout, detached.stderr, finish.stdout, finish.stderr, done.stdout, ...stored])
      expect(text.includes(FAKE.code)).toBe(false);
    expect(await waitNoProcesses(sb, 10_000)).toEqual([]);
  });
});
