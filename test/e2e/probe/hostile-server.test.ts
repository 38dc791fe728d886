/**
 * Hostile servers: one that leaks every token shape on every channel
 * and dies, one that writes an endless line, one that ignores SIGTERM.
 * Nothing it says may reach stdout, stderr, --json, -v, the trace or the
 * Prometheus file unredacted; memory and time stay bounded.
 */

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEAK_MARK } from '../../../src/sim/leak.js';
import { agyctl, type Sandbox } from '../../helpers/cli.js';
import { useFreshSandbox } from '../../helpers/fresh-sandbox.js';

const fresh = useFreshSandbox();

/** Every output of one run, labelled, so a failure names the channel that leaked. */
async function channels(sb: Sandbox, args: string[], label: string): Promise<Record<string, string>> {
  const trace = path.join(sb.root, `${label}.trace.jsonl`);
  const r = await agyctl([...args, '--trace', trace], sb);
  expect(r.exitCode, r.stderr).not.toBe(0);
  expect(r.exitCode, r.stderr).not.toBe(1);
  return {
    [`${label} stdout`]: r.stdout,
    [`${label} stderr`]: r.stderr,
    [`${label} trace`]: fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : '',
  };
}

function leaks(outputs: Record<string, string>): string[] {
  return Object.entries(outputs)
    .filter(([, text]) => text.includes(LEAK_MARK))
    .map(
      ([name, text]) =>
        `${name}: ${text
          .split('\n')
          .filter((l) => l.includes(LEAK_MARK))
          .slice(0, 3)
          .join(' | ')}`,
    );
}

describe('a server that leaks secrets on every channel', () => {
  it('check --live (human, -v, --json, trace, Prometheus) shows none of them', async () => {
    const sb = fresh({ AGY_SIM_LEAK_SECRETS: '1' });
    const prom = path.join(sb.root, 'check.prom');
    const outputs: Record<string, string> = {
      ...(await channels(sb, ['check', '--live', '--prometheus', prom], 'human')),
      ...(await channels(sb, ['check', '--live', '-v'], 'verbose')),
      ...(await channels(sb, ['check', '--live', '--json', '-v'], 'json')),
    };
    outputs.prometheus = fs.readFileSync(prom, 'utf8');
    // The run did see the server's words (redacted), so the test is not vacuous.
    expect(outputs['verbose stderr']).toContain('[REDACTED]');
    expect(leaks(outputs)).toEqual([]);
  });

  it('probe, failing at initialize with the secrets in the error and the stderr tail, shows none of them', async () => {
    const sb = fresh({ AGY_SIM_LEAK_SECRETS: 'init' });
    const outputs = {
      ...(await channels(sb, ['probe'], 'human')),
      ...(await channels(sb, ['probe', '-v'], 'verbose')),
      ...(await channels(sb, ['probe', '--json'], 'json')),
    };
    expect(outputs['json stdout']).toContain('[REDACTED]');
    expect(leaks(outputs)).toEqual([]);
  });

  it('login and logout show none of them', async () => {
    const sb = fresh({ AGY_SIM_LEAK_SECRETS: 'init' });
    const outputs = {
      ...(await channels(sb, ['login', '--timeout', '10s', '-v'], 'login')),
      ...(await channels(sb, ['login', '--timeout', '10s', '--json'], 'login-json')),
      ...(await channels(sb, ['logout', '-v'], 'logout')),
    };
    expect(leaks(outputs)).toEqual([]);
  });
});

describe('bounds against hostile servers', () => {
  it('a 20 MB stdout line without a newline is dropped with a verbose note; the probe goes on', async () => {
    const sb = fresh({ AGY_SIM_RAW_LINE_BYTES: String(20 * 1024 * 1024) });
    const r = await agyctl(['probe', '-v'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`dropped a ${20 * 1024 * 1024}-byte line from the server's stdout`);
  });

  // Before: 8.1 s and 7.2 s (TERM ignored, KILL only 5 s later). Generous margins: the machine is shared.
  it('check --live --timeout 3s against a server that ignores SIGTERM ends within the bound', async () => {
    const sb = fresh({ AGY_SIM_STARTUP_MS: '30000', AGY_SIM_IGNORE_SIGTERM: '1' });
    const started = Date.now();
    const r = await agyctl(['check', '--live', '--timeout', '3s'], sb);
    const elapsed = Date.now() - started;
    expect(r.stdout + r.stderr).toMatch(/--timeout 3s/);
    expect(elapsed).toBeLessThan(3_000 + 3_000);
  });

  it('probe --timeout 2s against a server that ignores SIGTERM ends within the bound', async () => {
    const sb = fresh({ AGY_SIM_STARTUP_MS: '30000', AGY_SIM_IGNORE_SIGTERM: '1' });
    const started = Date.now();
    const r = await agyctl(['probe', '--timeout', '2s'], sb);
    const elapsed = Date.now() - started;
    expect(r.exitCode, r.stderr).toBe(5);
    expect(elapsed).toBeLessThan(2_000 + 3_000);
  });
});
