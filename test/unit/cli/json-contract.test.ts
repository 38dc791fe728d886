/** The --json contract (one document on stdout, ok/error/exit), in process (test/helpers/in-process.ts). */
import { describe, expect, it } from 'vitest';
import { makeSandbox, parseJson, type Sandbox } from '../../helpers/cli.js';
import { runInProcess } from '../../helpers/in-process.js';

let sandbox: Sandbox | undefined;

describe('--json', () => {
  it('a usage error exits 2 with one JSON document under --json', async () => {
    sandbox = makeSandbox();
    const r = await runInProcess(['probe', '--no-such-flag', '--json'], { env: sandbox.env, cwd: sandbox.root });
    expect(r.exit).toBe(2);
    expect(parseJson(r.stdout)).toMatchObject({ schemaVersion: 1, ok: false, error: { code: 'usage', exit: 2 } });
  });

  it('no server anywhere: exit 4 naming --server, in both modes', async () => {
    sandbox = makeSandbox({ AGYCTL_SERVER: '', PATH: '/usr/bin:/bin' });
    const human = await runInProcess(['probe'], { env: sandbox.env, cwd: sandbox.root });
    expect(human.exit).toBe(4);
    expect(human.stderr).toContain('--server');
    const json = await runInProcess(['probe', '--json'], { env: sandbox.env, cwd: sandbox.root });
    expect(json.exit).toBe(4);
    expect(parseJson(json.stdout)).toMatchObject({ ok: false, error: { code: 'server-not-found', exit: 4 } });
    // One place for an error under --json: stdout's document, not a second copy in text on stderr.
    expect(json.stderr).not.toContain('server-not-found');
    expect(json.stderr).not.toMatch(/error:/);
    const verbose = await runInProcess(['probe', '--json', '--verbose'], { env: sandbox.env, cwd: sandbox.root });
    expect(verbose.stderr).toMatch(/error:.*--server|error:/);
  });

  it('--server that does not exist: exit 4', async () => {
    sandbox = makeSandbox();
    const r = await runInProcess(['probe', '--server', '/nonexistent/agy_acp_server --debug'], {
      env: sandbox.env,
      cwd: sandbox.root,
    });
    expect(r.exit).toBe(4);
  });

  it('a result is one document with schemaVersion and ok, and nothing for people on stdout', async () => {
    sandbox = makeSandbox();
    const r = await runInProcess(['settings', 'show', '--json'], { env: sandbox.env, cwd: sandbox.root });
    expect(r.exit).toBe(0);
    expect(r.json()).toMatchObject({ schemaVersion: 1, ok: true });
    expect(r.stdout.trim().split('\n')[0]).toBe('{');
    expect(r.stdout.trim().endsWith('}')).toBe(true);
  });

  it('a failing command: ok false, the documented exit code and error code', async () => {
    sandbox = makeSandbox();
    const r = await runInProcess(['settings', 'set-auth', 'no-such-type', '--json'], {
      env: sandbox.env,
      cwd: sandbox.root,
    });
    expect(r.exit).toBe(2);
    expect(r.json()).toMatchObject({
      schemaVersion: 1,
      ok: false,
      error: { exit: 2, message: expect.stringContaining('unknown auth type') },
    });
  });
});
