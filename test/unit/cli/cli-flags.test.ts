/** Flag parsing and usage errors, in process (test/helpers/in-process.ts): fast, no binary, no server. */
import { afterEach, describe, expect, it } from 'vitest';
import { parseDurationOption } from '../../../src/cli/parse-options.js';
import { makeSandbox, type Sandbox } from '../../helpers/cli.js';
import { runInProcess } from '../../helpers/in-process.js';

let sandbox: Sandbox | undefined;
afterEach(() => {
  sandbox?.cleanup();
  sandbox = undefined;
});

const inSandbox = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  sandbox ??= makeSandbox();
  return runInProcess(argv, { env: { ...sandbox.env, ...env }, cwd: sandbox.root });
};

describe('global contract', () => {
  it('--help and --version exit 0', async () => {
    const help = await inSandbox(['--help']);
    expect(help.exit).toBe(0);
    expect(help.stdout).toMatch(/login/);
    const version = await inSandbox(['--version']);
    expect(version.exit).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('a bad option value exits 2 naming the flag, before any server starts', async () => {
    const human = await inSandbox(['probe', '--timeout', 'soon']);
    expect(human.exit).toBe(2);
    expect(human.stderr).toContain('--timeout must be a duration');
    expect(human.stdout).toBe('');
  });

  it.each([
    [['probe', '--timeout', '5'], '--timeout 5 has no unit: write 5s or 5min.'],
    [['check', '--timeout', '90'], '--timeout 90 has no unit: write 90s or 90min.'],
    [['backup', '--busy-timeout', '10', '--to', 'b'], '--busy-timeout 10 has no unit: write 10s or 10min.'],
    [['connect', 'box', '--ssh-timeout', '30'], '--ssh-timeout 30 has no unit: write 30s or 30min.'],
    [['logout', '--timeout', '60'], '--timeout 60 has no unit: write 60s or 60min.'],
    [['probe', '--timeout', '99999h'], '--timeout 99999h is longer than agyctl can wait: at most 24d.'],
    [['check', '--timeout', '25d'], '--timeout 25d is longer than agyctl can wait: at most 24d.'],
    [['probe', '--timeout', '0s'], '--timeout must be at least 1ms (got "0s").'],
  ])('%j is refused at once (exit 2) with the fix spelled out', async (argv, message) => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const r = await inSandbox(argv);
      expect(r.exit, r.stderr).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe(`error: ${message}`);
      expect(r.stdout).toBe('');
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('takes systemd spellings (5min, 1h 30min) wherever a duration goes', async () => {
    for (const value of ['2min', '1h 30min']) {
      const r = await inSandbox(['probe', '--timeout', value]);
      expect(r.exit, `${value}: ${r.stderr}`).toBe(0);
    }
    for (const [value, ms] of [
      ['5min', 300_000],
      ['1h30min', 5_400_000],
      ['500ms', 500],
      ['2 minutes', 120_000],
      ['24d', 24 * 86_400_000],
    ] as const)
      expect(parseDurationOption('--timeout', value), value).toBe(ms);
  });

  it.each([
    [['probe', '--no-such-flag'], /unknown option '--no-such-flag'/],
    [['no-such-command'], /unknown command 'no-such-command'/],
    [['probe', 'extra'], /too many arguments/],
  ])('%j is a one-line usage error (exit 2) with the hint to --help', async (argv, message) => {
    const r = await inSandbox(argv);
    expect(r.exit).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('hint: run `agyctl --help`');
    expect(r.stdout).toBe('');
  });

  it.each([['sessions'], ['backup', '--to', 'backups']])(
    '%j with a state dir that has no conversations: exit 2 naming --state-dir',
    async (...argv) => {
      const r = await inSandbox([...argv, '--state-dir', 'no-such-dir']);
      expect(r.exit).toBe(2);
      expect(r.stderr).toMatch(/error: No conversations directory in .*no-such-dir\.\nhint: point --state-dir/);
    },
  );
});
