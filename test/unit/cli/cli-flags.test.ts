/** Flag parsing and usage errors, in process (test/helpers/in-process.ts): fast, no binary, no server. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDurationOption } from '../../../src/cli/parse-options.js';
import { makeSandbox, type Sandbox, writeSettings } from '../../helpers/cli.js';
import { runInProcess } from '../../helpers/in-process.js';

/** The test's sandbox, made by its first inSandbox() (makeSandbox removes it after the test). */
let sandbox: Sandbox | undefined;
afterEach(() => {
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
    sandbox ??= makeSandbox();
    fs.mkdirSync(path.join(sandbox.home, '.gemini/antigravity-acp/conversations'), { recursive: true });
    fs.mkdirSync(path.join(sandbox.root, 'b'));
    for (const value of ['2min', '1h 30min']) {
      const r = await inSandbox(['backup', '--dry-run', '--to', 'b', '--busy-timeout', value]);
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
    [['probe', '--no-such-flag'], /unknown option '--no-such-flag'/, 'hint: run `agyctl probe --help` for usage'],
    [['no-such-command'], /unknown command 'no-such-command' for 'agyctl'/, 'run `agyctl --help`'],
    [['probe', 'extra'], /too many arguments/, 'hint: run `agyctl probe --help` for usage'],
    [['login', 'status', '--bogus'], /unknown option '--bogus'/, 'hint: run `agyctl login status --help` for usage'],
  ])('%j is a one-line usage error (exit 2) naming the help to read', async (argv, message, hint) => {
    const r = await inSandbox(argv);
    expect(r.exit).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain(hint);
    expect(r.stdout).toBe('');
  });

  it.each([
    [['settings', 'shwo'], "unknown command 'shwo' for 'agyctl settings'", '`agyctl settings show`'],
    [['backup', 'verfy', 'latest'], "unknown command 'verfy' for 'agyctl backup'", '`agyctl backup verify`'],
    [['login', 'stauts'], "unknown command 'stauts' for 'agyctl login'", '`agyctl login status`'],
    [['--state-dir', '/tmp/x', 'settings', 'valdate'], "unknown command 'valdate'", '`agyctl settings validate`'],
    [['verbose'], "unknown command 'verbose' for 'agyctl'", '`agyctl --verbose`'],
  ])('the typo %j suggests the nearest subcommand', async (argv, message, suggestion) => {
    const r = await inSandbox(argv);
    expect(r.exit).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain(`hint: did you mean ${suggestion}?`);
    const json = await inSandbox([...argv, '--json']);
    expect(json.exit).toBe(2);
    expect((json.json().error as { hint: string }).hint).toContain(suggestion);
  });

  it('a missing argument says what to give: set-auth lists the four auth types', async () => {
    const r = await inSandbox(['settings', 'set-auth']);
    expect(r.exit).toBe(2);
    expect(r.stderr).toContain("missing required argument 'type'");
    expect(r.stderr).toContain('oauth-personal, gemini-api-key, oauth-business, agent-platform');
    expect(r.stderr).toContain('agyctl settings set-auth --help');
  });

  it('bare agyctl prints the usage on stdout and exits 0, as gh does', async () => {
    const r = await inSandbox([]);
    expect(r.exit).toBe(0);
    expect(r.stdout).toMatch(/^Usage: agyctl \[options\] \[command\]/);
    expect(r.stderr).toBe('');
  });

  it('an empty --state-dir is refused, not read as the default', async () => {
    const r = await inSandbox(['check', '--state-dir', '']);
    expect(r.exit).toBe(2);
    expect(r.stderr).toContain('error: --state-dir is empty.');
  });

  it('a HOME that does not exist is refused, not created; a HOME that is a file gets a hint about HOME', async () => {
    sandbox ??= makeSandbox();
    const missing = path.join(sandbox.root, 'nonexistent-home');
    const r = await inSandbox(['settings', 'set-auth', 'gemini-api-key'], { HOME: missing });
    expect(r.exit).toBe(2);
    expect(r.stderr).toMatch(/HOME .*nonexistent-home.* does not exist/);
    expect(fs.existsSync(missing)).toBe(false);
    const file = path.join(sandbox.root, 'home-file');
    fs.writeFileSync(file, '');
    const f = await inSandbox(['settings', 'set-auth', 'gemini-api-key'], { HOME: file });
    expect(f.exit).toBe(2);
    expect(f.stderr).toMatch(/HOME .* is not a directory/);
    expect(f.stderr).toMatch(/hint: set HOME/);
    expect(f.stderr).not.toMatch(/run agyctl as the user/);
  });

  it("a subcommand's help lists the program's options as global and pads to its own options", async () => {
    const r = await inSandbox(['login', 'status', '--help']);
    expect(r.exit).toBe(0);
    expect(r.stdout).not.toContain('--ssh-target'); // login's own option, not status's
    expect(r.stdout).toMatch(/^ {2}--wait {2,16}block/m);
    expect(r.stdout).toMatch(/^ {2}--state-dir <dir> {2}server state directory/m);
  });

  it.each([['check'], ['sessions'], ['backup', '--to', 'backups']])(
    '%j with a state dir that does not exist or is a file: one answer, exit 2 saying so, naming --state-dir',
    async (...argv) => {
      const r = await inSandbox([...argv, '--state-dir', 'no-such-dir']);
      expect(r.exit).toBe(2);
      expect(r.stderr).toMatch(/error: The state dir .*no-such-dir" does not exist\.\nhint: point --state-dir/);
      sandbox ??= makeSandbox();
      fs.writeFileSync(path.join(sandbox.root, 'a-file'), 'x');
      const f = await inSandbox([...argv, '--state-dir', 'a-file', '--json']);
      expect(f.exit).toBe(2);
      expect(f.json().error).toMatchObject({
        code: 'fs-not-a-directory',
        exit: 2,
        message: expect.stringMatching(/The state dir .*a-file" is not a directory\./),
      });
      const env = await inSandbox(argv, { AGYCTL_STATE_DIR: path.join(sandbox.root, 'a-file') });
      expect(env.exit).toBe(2);
    },
  );
});

describe('one rule for a linked token file', () => {
  it('check fails on a symlinked acp_token.json, as logout refuses it', async () => {
    sandbox ??= makeSandbox();
    writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
    const real = path.join(sandbox.root, 'token-elsewhere.json');
    fs.writeFileSync(real, JSON.stringify({ access_token: 'x', refresh_token: 'y' }), { mode: 0o600 });
    fs.symlinkSync(real, path.join(sandbox.stateDir, 'acp_token.json'));
    const check = await inSandbox(['check']);
    expect(check.exit).not.toBe(0);
    expect(check.stderr + check.stdout).toContain('is a symbolic link to');
    expect(check.stdout + check.stderr).not.toContain('regular file, yours, mode 0600');
    const logout = await inSandbox(['logout', '--json']);
    expect(logout.exit).toBe(2);
    expect((logout.json().error as { code: string }).code).toBe('unsafe-symlink');
  });
});

describe('renamed error codes', () => {
  it('login status --wait with no login: no-pending-login, the old no-login beside it', async () => {
    const r = await inSandbox(['login', 'status', '--wait', '--json']);
    expect(r.exit).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'no-pending-login', deprecatedCode: 'no-login' });
  });
});

describe('settings paths that are not what they should be', () => {
  it('settings.json that is a directory: show says so and how to fix it, not "mode ?"', async () => {
    sandbox ??= makeSandbox();
    fs.mkdirSync(path.join(sandbox.stateDir, 'settings.json'), { recursive: true });
    const r = await inSandbox(['settings', 'show']);
    expect(r.stdout).toContain('exists:    yes, but settings.json is a directory, not a file');
    expect(r.stdout).not.toContain('mode ?');
    expect(r.stdout + r.stderr).toContain('move it aside (mv ');
    expect(r.stdout + r.stderr).not.toContain('run as the user the server runs as');
  });

  it('--state-dir that is a file: show names the state dir and --state-dir', async () => {
    sandbox ??= makeSandbox();
    const file = path.join(sandbox.root, 'a-file');
    fs.writeFileSync(file, 'x');
    const r = await inSandbox(['--state-dir', file, 'settings', 'show']);
    expect(r.stdout).toContain(`exists:    no: the state dir ${file} is not a directory`);
    expect(r.stdout + r.stderr).toContain('point --state-dir');
    expect(r.stdout + r.stderr).not.toContain('run as the user the server runs as');
  });

  it('check on a state dir login cannot use suggests fixing --state-dir, not a login that refuses it', async () => {
    const r = await inSandbox(['check', '--state-dir', '/nonexistent/dir']);
    expect(r.exit).toBe(2);
    expect(r.stderr).toContain('"/nonexistent/dir" does not exist');
    expect(r.stderr).toContain('point --state-dir');
    expect(r.stdout + r.stderr).not.toMatch(/agyctl login/m);
    const good = await inSandbox(['check']);
    expect(good.stdout).toMatch(/fix: run: agyctl login \(or, to choose the auth type yourself/m);
  });
});

describe('a fix never names the command just run', () => {
  it('check --live on a box without a token (after logout) does not say to run `agyctl check --live`', async () => {
    expect((await inSandbox(['settings', 'set-auth', 'oauth-personal'])).exit).toBe(0);
    const live = await inSandbox(['check', '--live']);
    expect(live.exit).toBe(3);
    expect(live.stdout).toMatch(/agyctl login/);
    expect(live.stdout).not.toMatch(/check --live/);
    // Without --live the hint may offer it: the user has not run it.
    const plain = await inSandbox(['check']);
    expect(plain.stdout).toMatch(/check --live/);
  });
});

describe('settings show reports, it does not fail', () => {
  it('exits 0 and calls an unusable file a finding, never an "error:" line', async () => {
    const r = await inSandbox(['settings', 'show']);
    expect(r.exit).toBe(0);
    expect(r.stdout).toMatch(/^findings:\n {2}finding: .*settings\.json does not exist/m);
    expect(r.stdout + r.stderr).not.toMatch(/^\s*error:/m);
    const v = await inSandbox(['settings', 'validate']);
    expect(v.exit).toBe(2);
    expect(v.stdout).toMatch(/^ {2}error: /m);
  });
});

describe('an option of a subcommand given before it', () => {
  it.each([
    [['backup', '--from', '/srv/bk', 'list'], 'agyctl backup list --from /srv/bk'],
    [['backup', '--from=/srv/bk', 'verify', 'latest'], 'agyctl backup verify --from=/srv/bk latest'],
  ])('%j: the hint gives the right order', async (argv, fixed) => {
    const r = await runInProcess(argv);
    expect(r.exit).toBe(2);
    expect(r.stderr).toContain(
      `hint: --from belongs to \`agyctl backup ${argv.at(-1) === 'list' ? 'list' : 'verify'}\``,
    );
    expect(r.stderr).toContain(`\`${fixed}\``);
  });
});

describe('a path option given as --opt=~/x (no shell expands that ~)', () => {
  it('is under HOME: --prometheus=~/m.prom, --trace=~/t.jsonl', async () => {
    const r = await inSandbox(['check', '--prometheus=~/m.prom', '--trace=~/t.jsonl']);
    expect([0, 3]).toContain(r.exit);
    expect(fs.existsSync(path.join(sandbox!.home, 'm.prom'))).toBe(true);
    expect(fs.existsSync(path.join(sandbox!.root, '~'))).toBe(false);
  });

  it('--inventory=~/hosts.ini is read from HOME', async () => {
    const r = await inSandbox(['connect', '--inventory=~/no-such-hosts.ini', '--json']);
    expect(r.exit).toBe(2);
    expect(r.stdout).toContain(path.join(sandbox!.home, 'no-such-hosts.ini'));
  });
});
