/**
 * The commands docs/simulator.md tells a user to run from a checkout, as
 * written: the launcher as a server (stdin closed at once: it exits 0) and
 * the seeding. `/tmp/fakehome` is the doc's; a private mount namespace with
 * its own /tmp keeps it from the machine's. And `agyctl simulator` from the
 * npm entry is the same simulator the .deb route uses (test/release/
 * simulator-on-deb.test.ts runs that route).
 * @module-tag root
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../../helpers/cli.js';
import { mountsKeeping } from '../../helpers/private-mounts.js';

const DOC = fs.readFileSync(path.join(ROOT, 'docs', 'simulator.md'), 'utf8');

/** The one-line sh blocks before the .deb route: the checkout's commands. */
function checkoutCommands(): string[] {
  const head = DOC.slice(0, DOC.indexOf('## On a box without Node'));
  return [...head.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
}

/** Runs a doc line in the checkout, with a private /tmp, stdin closed. */
function asWritten(line: string) {
  return execa(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-euc',
      // A private /tmp for the doc's /tmp/fakehome, the checkout still where it was.
      [...mountsKeeping('"$PWD"', ['mount -t tmpfs tmpfs /tmp']), 'cd "$PWD"', line].join(' && '),
    ],
    {
      cwd: ROOT,
      stdin: 'ignore',
      reject: false,
      timeout: 30_000,
    },
  );
}

describe('docs/simulator.md: the checkout commands, as written', () => {
  it('the doc has the two commands', () => {
    expect(checkoutCommands()).toEqual([
      'HOME=/tmp/fakehome AGY_SIM_LAUNCH=stdout scripts/agy-acp-sim --debug',
      'HOME=/tmp/fakehome scripts/agy-acp-sim --seed-conversations',
    ]);
  });

  it('the server: with stdin closed, it exits 0 and prints nothing', async () => {
    const r = await asWritten(checkoutCommands()[0]!);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('the seeding: three conversation ids', async () => {
    const r = await asWritten(checkoutCommands()[1]!);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
    expect(r.stdout).toMatch(/^[0-9a-f-]{36}(\n[0-9a-f-]{36}){2}$/);
  });

  it('`agyctl simulator` from the npm entry seeds the same way and answers initialize', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-sim-entry-'));
    try {
      const env = { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8' };
      const seed = await execa(process.execPath, [BIN, 'simulator', '--seed-conversations'], { env, extendEnv: false });
      expect(seed.stdout.trim().split('\n')).toHaveLength(3);
      const init = await execa(process.execPath, [BIN, 'simulator'], {
        env,
        extendEnv: false,
        input: `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } })}\n`,
        timeout: 20_000,
      });
      expect(JSON.parse(init.stdout.split('\n')[0]!)).toMatchObject({
        id: 1,
        result: { agentInfo: { version: 'agy_acp_server_20260818_01_RC01' } },
      });
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
