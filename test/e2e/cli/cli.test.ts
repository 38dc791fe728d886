/**
 * The process side of the CLI contract and `agyctl probe`, on the built binary
 * against the simulator. Flag parsing, usage errors and the --json contract are
 * tested in process: test/unit/cli/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  agyctl,
  makeSandbox,
  parseJson,
  processesOf,
  type Sandbox,
  spawnAgyctl,
  waitNoProcesses,
} from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

describe('global contract', () => {
  it('--state-dir steers the server through HOME', async () => {
    sandbox = makeSandbox();
    const other = path.join(sandbox.root, 'box', '.gemini', 'antigravity-acp');
    fs.mkdirSync(other, { recursive: true });
    fs.writeFileSync(path.join(other, 'settings.json'), '{"auth":{"type":"gemini-api-key"}}');
    const r = await agyctl(['logout', '--local', '--state-dir', other], sandbox, {
      env: { GEMINI_API_KEY: 'AIzaFAKEFAKEFAKEFAKEFAKEFAKE' },
    });
    // The key still authenticates a server that reads *that* settings file: proof that it did.
    expect(r.exitCode).toBe(6);
  });
});

describe('probe', () => {
  it.each([[['probe']], [['check', '--live']]])(
    '%j -v shows the server command, its start-up time and each request with its latency',
    async (argv) => {
      sandbox = makeSandbox();
      const verbose = await agyctl([...argv, '-v'], sandbox);
      expect(verbose.stderr).toMatch(/^starting the server: .*agy-acp-sim/m);
      expect(verbose.stderr).toMatch(/^initialize: answered in \d+ ms$/m);
      expect(verbose.stderr).toMatch(/^the server answered initialize \d+ ms after it was started \(pid \d+\)$/m);
      if (argv[0] === 'check') expect(verbose.stderr).toMatch(/^session\/new: (answered|failed) in \d+ ms$/m);
      const quiet = await agyctl(argv, sandbox);
      expect(quiet.stderr).not.toContain('starting the server');
    },
  );

  it('reports build, protocol, auth methods, capabilities and timing', async () => {
    sandbox = makeSandbox({ AGY_SIM_STARTUP_MS: '300' });
    const r = await agyctl(['probe', '--json'], sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = parseJson(r.stdout) as {
      probe: Record<string, unknown> & { timings: { spawnToInitializeMs: number } };
    };
    expect(doc).toMatchObject({ schemaVersion: 1, ok: true });
    expect(doc.probe).toMatchObject({
      agent: { name: 'antigravity-acp', version: 'agy_acp_server_20260818_01_RC01' },
      protocolVersion: 1,
      authMethods: ['oauth-personal', 'oauth-business', 'gemini-api-key', 'agent-platform'],
    });
    // The simulator holds initialize for 300 ms after its own start; allow timer granularity.
    expect(doc.probe.timings.spawnToInitializeMs).toBeGreaterThanOrEqual(295);
    const human = await agyctl(['probe'], sandbox);
    expect(human.stdout).toMatch(/build: +agy_acp_server_20260818_01_RC01/);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('survives garbage, ANSI escapes and a multi-megabyte line on stdout', async () => {
    sandbox = makeSandbox({ AGY_SIM_NOISE: 'both', AGY_SIM_HUGE_LINE_BYTES: String(4 * 1024 * 1024) });
    const r = await agyctl(['probe', '--json'], sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ ok: true, probe: { protocolVersion: 1 } });
  });

  it('a server that exits at start: exit 4 with its stderr tail', async () => {
    sandbox = makeSandbox({ AGY_SIM_EXIT_AT_START: '7' });
    const r = await agyctl(['probe', '--json'], sandbox);
    expect(r.exitCode).toBe(4);
    const doc = parseJson(r.stdout) as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('server-exited');
    expect(doc.error.message).toContain('exited with code 7');
    expect(doc.error.message).toContain('simulated startup failure');
  });

  it('a server slower than --timeout: exit 5, and it is stopped', async () => {
    sandbox = makeSandbox({ AGY_SIM_STARTUP_MS: '5000' });
    const r = await agyctl(['probe', '--timeout', '1s'], sandbox);
    expect(r.exitCode).toBe(5);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('Ctrl-C while the server starts: exit 130 and no process left, even one that ignores SIGTERM', async () => {
    sandbox = makeSandbox({ AGY_SIM_STARTUP_MS: '20000', AGY_SIM_IGNORE_SIGTERM: '1' });
    const child = spawnAgyctl(['probe'], sandbox);
    const deadline = Date.now() + 10_000;
    // Wait for the simulator to exist, then interrupt.
    while (Date.now() < deadline) {
      if (processesOf(sandbox).length >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });
});
