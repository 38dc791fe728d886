/**
 * What root hands the owner's child (cli/as-owner.ts): an environment built
 * from nothing but the account and an allow-list, and a relay of its output
 * that no control character crosses. The real child is in
 * test/e2e/root/root-owner-child.test.ts.
 */
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { ActionFactory, GlobalOptions } from '../../src/cli/action.js';
import {
  OWNER_DEFAULT_DEADLINE_MS,
  OWNER_GRACE_MS,
  OWNER_PATH,
  ownerDeadlineMs,
  ownerEnv,
  relaySanitized,
  runsAsOwner,
} from '../../src/cli/as-owner.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import type { TreeOwner } from '../../src/util/os/tree-owner.js';

const owner: TreeOwner = { uid: 1234, gid: 1234, name: 'bob', home: '/home/bob', shell: '/bin/bash' };
const opts = (stateDirExplicit: boolean): GlobalOptions =>
  ({ stateDir: '/home/bob/.gemini/antigravity-acp', stateDirExplicit, json: false, color: false }) as GlobalOptions;

const ROOTS = {
  PATH: '/root/bin:/usr/bin',
  HOME: '/root',
  USER: 'root',
  LOGNAME: 'root',
  SHELL: '/bin/zsh',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  VAULT_TOKEN: 'vault-token',
  SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1',
  GEMINI_API_KEY: 'root-key',
  NODE_OPTIONS: '--require /root/hook.js',
  LD_PRELOAD: '/root/x.so',
  TMPDIR: '/root/tmp',
  XDG_RUNTIME_DIR: '/run/user/0',
  DISPLAY: ':0',
  LANG: 'de_DE.UTF-8',
  LC_TIME: 'C',
  TERM: 'xterm-256color',
  TZ: 'Europe/Berlin',
  NO_COLOR: '1',
  AGYCTL_SERVER: '/opt/agy/agy_acp_server',
  AGYCTL_PROFILE: 'antigravity',
  AGYCTL_TRACE_FD: '7',
  AGYCTL_AS_OWNER: '0:0:root',
};

describe("the owner's environment", () => {
  it("keeps none of root's secrets, paths or hooks; names the account; passes locale, TERM, TZ and agyctl's settings", () => {
    const env = ownerEnv(owner, opts(true), ROOTS);
    expect(env).toEqual({
      PATH: OWNER_PATH,
      HOME: '/home/bob',
      USER: 'bob',
      LOGNAME: 'bob',
      SHELL: '/bin/bash',
      LANG: 'de_DE.UTF-8',
      LC_TIME: 'C',
      TERM: 'xterm-256color',
      TZ: 'Europe/Berlin',
      NO_COLOR: '1',
      AGYCTL_SERVER: '/opt/agy/agy_acp_server',
      AGYCTL_PROFILE: 'antigravity',
      AGYCTL_AS_OWNER: '1234:1234:bob',
    });
  });

  it('keeps the HOME through which the state dir was found when no state dir was named', () => {
    expect(ownerEnv(owner, opts(false), { ...ROOTS, HOME: '/srv/bob' }).HOME).toBe('/srv/bob');
  });
});

describe("root's deadline on the owner's side", () => {
  it("is the command's --timeout and the grace, or the default without one", () => {
    expect(ownerDeadlineMs(undefined, '60s')).toBe(60_000 + OWNER_GRACE_MS);
    expect(ownerDeadlineMs(undefined, undefined)).toBe(OWNER_DEFAULT_DEADLINE_MS);
  });

  /** The deadline root would put on the owner's side of `argv`, as commander parses it with every real command. */
  async function deadlineOf(argv: string[]): Promise<number> {
    const program = new Command('agyctl').exitOverride();
    let deadline: number | undefined;
    const action: ActionFactory =
      () =>
      (...commanderArgs: unknown[]) => {
        const command = commanderArgs.at(-1) as Command;
        const options = commanderArgs.at(-2) as Record<string, unknown>;
        expect(runsAsOwner(command, commanderArgs.slice(0, -2))).toBe(true);
        deadline = ownerDeadlineMs(command, options.timeout);
        return Promise.resolve();
      };
    for (const register of COMMANDS) register(program, action);
    await program.parseAsync(argv, { from: 'user' });
    if (deadline === undefined) throw new Error(`no action ran for ${argv.join(' ')}`);
    return deadline;
  }

  it('settings and sessions take --timeout (default 10m) as the deadline itself, wherever it stands', async () => {
    expect(await deadlineOf(['settings'])).toBe(10 * 60_000);
    expect(await deadlineOf(['settings', 'show', '--timeout', '2s'])).toBe(2_000);
    expect(await deadlineOf(['settings', '--timeout', '30s', 'validate'])).toBe(30_000);
    expect(await deadlineOf(['settings', 'set-auth', 'oauth-personal', '--timeout', '1m'])).toBe(60_000);
    expect(await deadlineOf(['sessions'])).toBe(10 * 60_000);
    expect(await deadlineOf(['sessions', '--timeout', '90s'])).toBe(90_000);
    expect(await deadlineOf(['sessions', 'export', '--timeout', '5m', '--out', '/tmp/x'])).toBe(300_000);
    expect(await deadlineOf(['check', '--timeout', '60s'])).toBe(60_000 + OWNER_GRACE_MS);
    await expect(deadlineOf(['sessions', '--timeout', 'soon'])).rejects.toThrow(/--timeout/);
  });
});

describe("the child's output on root's terminal", () => {
  it('loses every escape sequence and control character, also when one is split between writes', async () => {
    const from = new PassThrough();
    const to = new PassThrough();
    const got: Buffer[] = [];
    to.on('data', (b: Buffer) => got.push(b));
    const done = relaySanitized(from, to);
    from.write('ok \x1b]0;title\x07line\n');
    from.write('split \x1b[3');
    from.write('1m red ');
    from.write(Buffer.from([0xc2])); // U+009B (CSI) in UTF-8, split between two writes
    from.write(Buffer.from([0x9b]));
    from.write('\u009b2J\x1bP+q\x1b\\ tiocsti\x07 \x08\x7f end\n');
    from.end();
    await done;
    const text = Buffer.concat(got).toString('utf8');
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(text).toContain('ok line\n');
    expect(text).toContain('end\n');
  });
});
