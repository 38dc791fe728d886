/** Flag parsing and usage errors, in process (test/helpers/in-process.ts): fast, no binary, no server. */
import { afterEach, describe, expect, it } from 'vitest';
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
    '%j with a state dir that does not exist: exit 2 saying so, naming --state-dir',
    async (...argv) => {
      const r = await inSandbox([...argv, '--state-dir', 'no-such-dir']);
      expect(r.exit).toBe(2);
      expect(r.stderr).toMatch(/error: The state dir .*no-such-dir does not exist\.\nhint: point --state-dir/);
    },
  );
});
