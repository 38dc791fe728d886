/**
 * `agyctl help …` for every command of the help tree (test/helpers/help-tree.ts,
 * so a new command is walked without this file changing):
 * - `agyctl help A B` prints what `agyctl A B --help` prints, exit 0, with
 *   global options before or after the words (`--json`, `--no-color`, taking
 *   turns from command to command), and so does `agyctl A help B` wherever A
 *   has subcommands;
 * - a mistyped word (`help A Bx`, `A help Bx`, `A Bx`) is the usage exit code
 *   of docs/exit-codes.md, one `error:` line and a hint naming the nearest
 *   command (one JSON error document with --json, for every command too);
 * - hidden commands (agyctl's own plumbing) are never offered.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, parseJson, ROOT, type RunResult } from '../../helpers/cli.js';
import { sectionOf, type TreeCommand, useHelpTree } from '../../helpers/help-tree.js';

/** The usage exit code, as docs/exit-codes.md documents it. */
const USAGE = Number(
  /^\| (\d+) \| `usage` \|/m.exec(fs.readFileSync(path.join(ROOT, 'docs', 'exit-codes.md'), 'utf8'))?.[1],
);

/** The hidden commands registered (`.command('__x', { hidden: true })`): the help tree does not show them. */
function hiddenCommands(): string[] {
  const dir = path.join(ROOT, 'src', 'cli', 'commands');
  const names: string[] = [];
  for (const folder of fs.readdirSync(dir)) {
    const file = path.join(dir, folder, 'register.ts');
    if (!fs.existsSync(file)) continue;
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/\.command\('([^' ]+)[^']*',\s*\{\s*hidden: true/g))
      names.push(m[1]!);
  }
  return names;
}

/** A slip of the fingers: the first two letters swapped (`lsit`, `sue`), one edit from the name. */
const typo = (name: string): string => `${name[1]}${name[0]}${name.slice(2)}`;

const walked = useHelpTree();

const run = (args: string[]): Promise<RunResult> => agyctl(args, walked.sb);
const commands = (): TreeCommand[] => walked.tree.filter((cmd) => cmd.path.length > 0);
const withSubcommands = (): TreeCommand[] => walked.tree.filter((cmd) => cmd.subcommands.some((s) => s !== 'help'));

/** What is wrong with a usage error's answer (nothing: undefined): the exit code, one `error:` line, the hint. */
function usageErrorProblem(r: RunResult, hint: string): string | undefined {
  const lines = r.stderr.split('\n').filter(Boolean);
  const ok =
    r.exitCode === USAGE &&
    r.stdout === '' &&
    lines.filter((l) => l.startsWith('error: ')).length === 1 &&
    (lines.find((l) => l.startsWith('hint: ')) ?? '').includes(hint);
  return ok ? undefined : `exit ${r.exitCode}, wanted a hint with ${hint}: ${r.stderr.trim() || r.stdout.slice(0, 60)}`;
}

/** The same for --json: exit code, nothing on stderr, one JSON document whose error is `usage` with the hint. */
function jsonUsageErrorProblem(r: RunResult, hint: string): string | undefined {
  let error: { code?: string; hint?: string } | undefined;
  try {
    error = (parseJson(r.stdout) as { error?: { code?: string; hint?: string } }).error;
  } catch {
    error = undefined;
  }
  const ok = r.exitCode === USAGE && r.stderr === '' && error?.code === 'usage' && (error.hint ?? '').includes(hint);
  return ok
    ? undefined
    : `exit ${r.exitCode}, wanted a JSON usage error with ${hint}: ${r.stdout.trim()}${r.stderr.trim()}`;
}

describe('the help tree', () => {
  it('is walked whole: every command with subcommands, and the usage code is read from docs/exit-codes.md', () => {
    const names = walked.tree.map((cmd) => cmd.path.join(' '));
    expect(names).toEqual(expect.arrayContaining(['backup verify', 'settings set-auth', 'server install', 'version']));
    expect(names.length).toBeGreaterThan(20);
    expect(USAGE).toBe(2);
    expect(hiddenCommands()).toEqual(expect.arrayContaining(['__complete', '__login-supervisor']));
  });

  it('lists `help [command]` under every command with subcommands, those with an action of their own too', () => {
    const unlisted = withSubcommands()
      .filter((cmd) => !sectionOf(cmd.help, 'Commands:').some((line) => line.startsWith('  help [command] ')))
      .map((cmd) => cmd.path.join(' ') || 'agyctl');
    expect(withSubcommands().map((cmd) => cmd.path.join(' '))).toEqual(
      expect.arrayContaining(['backup', 'login', 'sessions', 'settings']),
    );
    expect(unlisted).toEqual([]);
  });
});

describe('`agyctl help A B` is `agyctl A B --help`', () => {
  it('`agyctl help`, `agyctl help help` and a bare `agyctl` are the usage', async () => {
    const usage = (await run(['--help'])).stdout;
    expect(usage).toMatch(/^Usage: agyctl /);
    const wrong: string[] = [];
    for (const args of [['help'], ['help', 'help'], ['--json', 'help'], ['--no-color', 'help', 'help'], []]) {
      const r = await run(args);
      if (r.exitCode !== 0 || r.stderr !== '' || r.stdout !== usage)
        wrong.push(`${args.join(' ')}: exit ${r.exitCode}, ${r.stderr.trim() || r.stdout.split('\n')[0]}`);
    }
    expect(wrong).toEqual([]);
  });

  it('for every command, with a global option before or after the words, and as `A help B`', async () => {
    const wrong: string[] = [];
    for (const [i, cmd] of commands().entries()) {
      // The global options take turns from command to command: each is tried, before and after the words.
      const globals = [
        ['--json', 'help', ...cmd.path],
        ['--no-color', 'help', ...cmd.path],
        ['help', ...cmd.path, '--no-color'],
      ];
      const forms = [
        ['help', ...cmd.path],
        globals[i % globals.length]!,
        ...(cmd.path.length > 1 ? [[...cmd.path.slice(0, -1), 'help', ...cmd.path.slice(-1)]] : []),
        ...(cmd.subcommands.some((s) => s !== 'help') ? [[...cmd.path, 'help']] : []),
      ];
      const results = await Promise.all(forms.map(run));
      forms.forEach((args, j) => {
        const r = results[j]!;
        // cmd.help is `A B --help` as the walk ran it, in the same sandbox and environment.
        if (r.exitCode !== 0 || r.stderr !== '' || r.stdout !== cmd.help)
          wrong.push(`${args.join(' ')}: exit ${r.exitCode}, ${r.stderr.trim() || r.stdout.split('\n')[0]}`);
      });
    }
    expect(wrong).toEqual([]);
  }, 180_000);
});

describe('a mistyped word names the nearest command', () => {
  it('`help A Bx`, `A help Bx` and `A Bx`, for every command', async () => {
    const wrong: string[] = [];
    for (const cmd of commands()) {
      const parent = cmd.path.slice(0, -1);
      const slip = typo(cmd.path.at(-1)!);
      const cases: Array<[string[], string]> = [
        [['help', ...parent, slip], `\`agyctl help ${cmd.path.join(' ')}\``],
        [[...parent, slip], `\`agyctl ${cmd.path.join(' ')}\``],
        ...(parent.length > 0
          ? [[[...parent, 'help', slip], `\`agyctl help ${cmd.path.join(' ')}\``] as [string[], string]]
          : []),
      ];
      const json = ['--json', 'help', ...parent, slip];
      const [results, jsonResult] = await Promise.all([Promise.all(cases.map(([args]) => run(args))), run(json)]);
      cases.forEach(([args, hint], i) => {
        const problem = usageErrorProblem(results[i]!, hint);
        if (problem) wrong.push(`${args.join(' ')}: ${problem}`);
      });
      const problem = jsonUsageErrorProblem(jsonResult, `\`agyctl help ${cmd.path.join(' ')}\``);
      if (problem) wrong.push(`${json.join(' ')}: ${problem}`);
    }
    expect(wrong).toEqual([]);
  }, 180_000);

  it('with --json after the words too: one JSON error document on stdout, the same exit code and hint', async () => {
    const r = await run(['help', 'backup', typo('verify'), '--json']);
    expect(jsonUsageErrorProblem(r, '`agyctl help backup verify`')).toBeUndefined();
  });
});

describe('hidden commands are never offered', () => {
  it('not for a slip of their name, nor in the list of what there is', async () => {
    const hidden = hiddenCommands();
    const said: string[] = [];
    for (const name of hidden) {
      for (const args of [['help', name.slice(0, -1)], [name.slice(0, -1)]]) {
        const r = await run(args);
        expect(r.exitCode, args.join(' ')).toBe(USAGE);
        said.push(r.stderr);
      }
    }
    for (const cmd of withSubcommands()) {
      for (const args of [
        ['help', ...cmd.path, 'zzzzzzzz'],
        [...cmd.path, 'zzzzzzzz'],
      ]) {
        const r = await run(args);
        expect(r.exitCode, args.join(' ')).toBe(USAGE);
        said.push(r.stderr);
      }
    }
    for (const name of hidden) expect(said.join('\n')).not.toContain(name);
  }, 120_000);
});
