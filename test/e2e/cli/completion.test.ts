/**
 * `agyctl completion bash|zsh|fish` loaded in the real shells, completing
 * from the built program: subcommands, options, and values (profiles, auth
 * types, shells, method ids, snapshot names listed at TAB time through
 * `agyctl __complete snapshots`). zsh runs in a pseudo-terminal with the
 * script installed as _agyctl on $fpath (test/helpers/zsh-complete.zsh);
 * fish answers `complete -C`. zsh and fish come from Debian (.ci/run installs them).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, makeSandbox, ROOT, type Sandbox } from '../../helpers/cli.js';

const ZSH_HELPER = path.join(ROOT, 'test', 'helpers', 'zsh-complete.zsh');
const SNAP = '2026-12-01T21-29-54.253Z';
const OLDER = '2026-11-30T08-00-00.000Z';
const AUTH_TYPES = ['agent-platform', 'gemini-api-key', 'oauth-business', 'oauth-personal', 'vertex-ai'];
const METHODS = ['agent-platform', 'gateway', 'gemini-api-key', 'oauth-business', 'oauth-personal', 'vertex-ai'];

/** The test's sandbox, made by its first setup() (makeSandbox removes it after the test). */
let sandbox: Sandbox | undefined;
afterEach(() => {
  sandbox = undefined;
});

/** A sandbox with `agyctl` on PATH and a backup directory holding two snapshots and things that are not snapshots. */
function setup(): Sandbox {
  if (sandbox) return sandbox;
  sandbox = makeSandbox();
  const bin = path.join(sandbox.root, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'agyctl'), `#!/bin/sh\nexec ${process.execPath} ${BIN} "$@"\n`, { mode: 0o755 });
  sandbox.env = { ...sandbox.env, PATH: `${bin}:${process.env.PATH}` };
  const backups = path.join(sandbox.home, '.local', 'state', 'agyctl', 'backups');
  for (const name of [SNAP, OLDER, `${SNAP}$(touch PWNED)`, '2026-12-02T00-00-00.000Z']) {
    fs.mkdirSync(path.join(backups, name), { recursive: true });
    // The last one has no manifest: an interrupted or foreign directory, not a snapshot.
    if (!name.startsWith('2026-12-02')) fs.writeFileSync(path.join(backups, name, 'manifest.json'), '{}');
  }
  fs.symlinkSync(path.join(backups, SNAP), path.join(backups, '2026-12-03T00-00-00.000Z'));
  return sandbox;
}

const pwned = (sb: Sandbox): boolean => fs.existsSync(path.join(sb.root, 'PWNED')) || fs.existsSync('PWNED');

/** COMPREPLY after completing the last word of `words` (COMP_CWORD points at it). */
async function bash(words: string[]): Promise<string[]> {
  const sb = setup();
  const script = [
    'source <(agyctl completion bash)',
    `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    '_agyctl',
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('\n');
  const r = await execa('bash', ['-c', script], {
    env: sb.env,
    extendEnv: false,
    cwd: sb.root,
    reject: false,
    timeout: 30_000,
  });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  expect(String(r.stderr)).toBe('');
  return String(r.stdout).split('\n').filter(Boolean);
}

/** What zsh offers after typing `line` and TAB, with the script installed as _agyctl on $fpath. */
async function zsh(line: string): Promise<string[]> {
  const sb = setup();
  const fn = path.join(sb.root, 'zfunc');
  if (!fs.existsSync(fn)) {
    fs.mkdirSync(fn);
    const r = await execa('agyctl', ['completion', 'zsh'], { env: sb.env, extendEnv: false });
    fs.writeFileSync(path.join(fn, '_agyctl'), `${r.stdout}\n`);
  }
  const r = await execa('zsh', ['-f', ZSH_HELPER, fn, line], {
    env: sb.env,
    extendEnv: false,
    cwd: sb.root,
    reject: false,
    timeout: 30_000,
  });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  return String(r.stdout).split('\n').filter(Boolean).sort();
}

/** fish's candidates for `line` (`complete -C`), values only. */
async function fish(line: string): Promise<string[]> {
  const sb = setup();
  const script = `agyctl completion fish | source; complete -C ${JSON.stringify(line)}`;
  const r = await execa('fish', ['--no-config', '-c', script], {
    env: sb.env,
    extendEnv: false,
    cwd: sb.root,
    reject: false,
    timeout: 30_000,
  });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  return String(r.stdout)
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t')[0]!)
    .sort();
}

describe('bash completion', () => {
  it('completes `agyctl ba` to backup', async () => {
    expect(await bash(['agyctl', 'ba'])).toEqual(['backup']);
  });

  it('completes subcommands, options, and --profile values, skipping option values', async () => {
    expect(await bash(['agyctl', 'settings', 's'])).toEqual(['show', 'set-auth']);
    expect(await bash(['agyctl', '--profile', ''])).toEqual(['antigravity', 'gemini-cli']);
    expect(await bash(['agyctl', 'backup', '--to', 'verify', 'v'])).toEqual(['verify']);
    expect(await bash(['agyctl', 'backup', 'verify', '--fr'])).toEqual(['--from']);
    expect(await bash(['agyctl', 'probe', '--ti'])).toEqual(['--timeout']);
  });

  it('completes values: auth types, shells, method ids', async () => {
    expect((await bash(['agyctl', 'settings', 'set-auth', ''])).sort()).toEqual(AUTH_TYPES);
    expect(await bash(['agyctl', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect((await bash(['agyctl', 'login', '--method', ''])).sort()).toEqual(METHODS);
    expect(await bash(['agyctl', 'connect', 'box', '--method', 'oauth-p'])).toEqual(['oauth-personal']);
    // After the argument is given, options again.
    expect(await bash(['agyctl', 'settings', 'set-auth', 'oauth-personal', '--pro'])).toEqual([
      '--project',
      '--profile',
    ]);
  });

  it('completes snapshot names from the backup directory, and nothing that is not a snapshot', async () => {
    const sb = setup();
    expect(await bash(['agyctl', 'restore', ''])).toEqual(['latest', SNAP, OLDER]);
    expect(await bash(['agyctl', 'backup', 'verify', '2026-11'])).toEqual([OLDER]);
    const elsewhere = path.join(sb.root, 'elsewhere');
    fs.cpSync(path.join(sb.home, '.local', 'state', 'agyctl', 'backups', OLDER), path.join(elsewhere, OLDER), {
      recursive: true,
    });
    expect(await bash(['agyctl', 'restore', '--from', elsewhere, ''])).toEqual(['latest', OLDER]);
    expect(pwned(sb)).toBe(false);
  });
});

describe('zsh completion (native: #compdef, _arguments)', () => {
  it('is a zsh completion function, not bash completion run through compinit', async () => {
    const sb = setup();
    const script = String((await execa('agyctl', ['completion', 'zsh'], { env: sb.env, extendEnv: false })).stdout);
    expect(script.split('\n')[0]).toBe('#compdef agyctl');
    expect(script).toContain('_arguments');
    expect(script.split('\n').filter((l) => !l.trimStart().startsWith('#'))).not.toContainEqual(
      expect.stringMatching(/compinit|bashcompinit|complete -F/),
    );
  });

  it('completes subcommands, options and values', async () => {
    expect(await zsh('agyctl settings s')).toEqual(['set-auth', 'show']);
    expect(await zsh('agyctl probe --ti')).toEqual(['--timeout']);
    expect(await zsh('agyctl --profile ')).toEqual(['antigravity', 'gemini-cli']);
    expect(await zsh('agyctl settings set-auth ')).toEqual(AUTH_TYPES);
    expect(await zsh('agyctl completion ')).toEqual(['bash', 'fish', 'zsh']);
    expect(await zsh('agyctl login --method ')).toEqual(METHODS);
  });

  it('completes snapshot names, and nothing that is not a snapshot', async () => {
    const sb = setup();
    expect(await zsh('agyctl restore ')).toEqual([OLDER, SNAP, 'latest']);
    expect(await zsh('agyctl restore --from ~/.local/state/agyctl/backups 2026-12')).toEqual([SNAP]);
    expect(pwned(sb)).toBe(false);
  });
});

describe("the help's install examples", () => {
  it('work as written on a fresh HOME (no ~/.zfunc, no ~/.config yet)', async () => {
    const sb = setup();
    const help = String((await execa('agyctl', ['completion', '--help'], { env: sb.env, extendEnv: false })).stdout);
    const installs = [...help.matchAll(/^ {2}\$ (.+ > (\S+))$/gm)];
    expect(installs.length).toBeGreaterThanOrEqual(2);
    for (const [, line, target] of installs) {
      const r = await execa('sh', ['-c', line!], { env: sb.env, extendEnv: false, cwd: sb.root, reject: false });
      expect(r.exitCode, `${line}: ${r.stderr}`).toBe(0);
      const file = target!.replace(/^~/, sb.home);
      expect(fs.readFileSync(file, 'utf8'), line).toMatch(/agyctl/);
    }
  });
});

describe('fish completion', () => {
  it('completes subcommands and values', async () => {
    expect(await fish('agyctl settings s')).toEqual(['set-auth', 'show']);
    expect(await fish('agyctl settings set-auth ')).toEqual(AUTH_TYPES);
    expect(await fish('agyctl completion ')).toEqual(['bash', 'fish', 'zsh']);
    expect(await fish('agyctl login --method ')).toEqual(METHODS);
    expect(await fish('agyctl restore ')).toEqual([OLDER, SNAP, 'latest']);
    expect(pwned(setup())).toBe(false);
  });
});

describe('`agyctl help` completes', () => {
  it('as a command, and its topics: every command and exit-codes (bash, zsh, fish)', async () => {
    expect(await bash(['agyctl', 'he'])).toEqual(['help']);
    expect(await bash(['agyctl', 'help', 'ex'])).toEqual(['exit-codes']);
    expect(await bash(['agyctl', 'help', 'ba'])).toEqual(['backup']);
    expect(await zsh('agyctl help ex')).toEqual(['exit-codes']);
    expect(await zsh('agyctl hel')).toEqual(['help']);
    expect(await fish('agyctl help ex')).toEqual(['exit-codes']);
    expect(await fish('agyctl hel')).toEqual(['help']);
  });
});
