/** Help examples and exit codes on every command, and completion scripts generated from the live program (in process). */
import fs from 'node:fs';
import { Command } from 'commander';
import shellQuote from 'shell-quote';
import { describe, expect, it } from 'vitest';
import { completionScript, describeTree } from '../../../src/cli/completion.js';
import { HELP } from '../../../src/cli/help-text.js';
import { runInProcess } from '../../helpers/in-process.js';

/** The real program's bash completion script, through `agyctl completion bash --json`. */
async function liveTree() {
  const r = await runInProcess(['completion', 'bash', '--json']);
  expect(r.exit).toBe(0);
  return r.json() as { completion: { shell: string; script: string } };
}

describe('--help', () => {
  it('every command has Examples and its exit codes', async () => {
    const doc = await liveTree();
    const paths = [...doc.completion.script.matchAll(/^ {4}'([a-z -]*)'\) echo '--/gm)].map((m) => m[1]!);
    expect(paths).toContain('settings set-auth');
    for (const path of paths) {
      const r = await runInProcess([...path.split(' ').filter(Boolean), '--help']);
      expect(r.exit, path).toBe(0);
      expect(r.stdout, path).toMatch(/\nExamples:\n( {2}# .+\n)+ {2}\$ agyctl|\$ source <\(agyctl/);
      expect(r.stdout, path).toMatch(/\nExit codes \(all of them: agyctl help exit-codes\):\n {4}0 {2}\S/);
    }
  });

  it('examples use only Linux commands (no pbpaste, pbcopy, open)', () => {
    for (const extra of Object.values(HELP))
      for (const [cmd] of extra.examples) expect(cmd).not.toMatch(/\b(pbpaste|pbcopy|open)\b \|/);
    expect(JSON.stringify(HELP)).not.toMatch(/pbpaste|pbcopy/);
  });

  it('`agyctl help exit-codes` prints every exit code (what each help points to), also as JSON', async () => {
    const r = await runInProcess(['help', 'exit-codes']);
    expect(r.exit).toBe(0);
    for (const code of [0, 1, 2, 3, 4, 5, 6, 130]) expect(r.stdout).toMatch(new RegExp(`^ *${code}  [a-z]+ +\\S`, 'm'));
    const j = await runInProcess(['help', 'exit-codes', '--json']);
    expect(j.exit).toBe(0);
    expect((j.json().exitCodes as Array<{ exit: number }>).map((e) => e.exit)).toContain(130);
  });

  it.each([
    [['--json', 'help', 'exit-codes']],
    [['--no-color', 'help', 'exit-codes', '--json']],
    [['-v', '--json', 'help', 'exit-codes']],
  ])('%j: the exit-code table, wherever the global options stand', async (argv) => {
    const r = await runInProcess(argv);
    expect(r.exit).toBe(0);
    expect((r.json().exitCodes as Array<{ exit: number }>).map((e) => e.exit)).toContain(130);
    const text = await runInProcess(['--no-color', 'help', 'exit-codes']);
    expect(text.stdout).not.toMatch(/^Usage:/m);
    expect(text.stdout).toMatch(/^ {2}0 {2}ok {11}\S/m);
  });

  it('`help exit-codes` wraps to 80 columns, its continuation lines under the meaning', async () => {
    const r = await runInProcess(['help', 'exit-codes']);
    const lines = r.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    for (const line of lines.slice(2)) expect(line, line).toMatch(/^( {0,2}\d{1,3} {2}[a-zA-Z]| {18}\S)/);
  });

  it('`help exit-codes` names docs by a path that exists on this box', async () => {
    const r = await runInProcess(['help', 'exit-codes']);
    const flat = r.stdout.replace(/\n {18}/g, ' ');
    expect(flat).not.toMatch(/[^/]docs\/[a-z-]+\.md/);
    const docs = [...flat.matchAll(/\/\S+\/docs\/[a-z-]+\.md(\.gz)?/g)].map((m) => m[0]);
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) expect(fs.existsSync(doc), doc).toBe(true);
  });

  it.each([
    [['help', 'settings', 'set-auth'], 'Usage: agyctl settings set-auth'],
    [['help', 'login', 'finish'], 'Usage: agyctl login finish'],
    [['--no-color', 'help', 'backup', 'list'], 'Usage: agyctl backup list'],
    [['backup', 'help', 'verify'], 'Usage: agyctl backup verify'],
    [['login', '--json', 'help', 'finish'], 'Usage: agyctl login finish'],
    [['help', 'help'], 'Usage: agyctl [options] [command]'],
  ])("%j shows that subcommand's help", async (argv, usage) => {
    const r = await runInProcess(argv);
    expect(r.exit).toBe(0);
    expect(r.stdout.startsWith(usage)).toBe(true);
  });

  it.each([
    [['help', 'logn'], '`agyctl help login`'],
    [['help', 'settings', 'shwo'], '`agyctl help settings show`'],
    [['help', 'exit-code'], '`agyctl help exit-codes`'],
    [['server', 'help', 'instal'], '`agyctl help server install`'],
  ])('%j suggests the topic (exit 2)', async (argv, fix) => {
    const r = await runInProcess(argv);
    expect(r.exit).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`did you mean ${fix}?`);
  });

  it('`help` where a command takes no subcommand is its argument, not a request for help', async () => {
    const r = await runInProcess(['settings', 'set-auth', 'help']);
    expect(r.exit).toBe(2);
    expect(r.stdout).not.toContain('Usage:');
    expect(r.stderr).toMatch(/^error: .*help/m);
  });

  it('an example comment longer than the line wraps into more `#` lines', async () => {
    const r = await runInProcess(['--help']);
    const examples = r.stdout.slice(r.stdout.indexOf('\nExamples:\n'), r.stdout.indexOf('\nExit codes'));
    const lines = examples.trim().split('\n').slice(1);
    expect(lines.length).toBeGreaterThan(8);
    for (const line of lines) {
      expect(line, line).toMatch(/^ {2}[#$] /);
      if (line.startsWith('  #')) expect(line.length, line).toBeLessThanOrEqual(80);
    }
  });

  it('examples use only options their command has', async () => {
    const script = (await liveTree()).completion.script;
    const optionsOf = (path: string): string[] => {
      const m = new RegExp(`^ {4}'${path}'\\) echo '([^']*)'`, 'm').exec(script.slice(script.indexOf('_agyctl_opts')));
      return m ? m[1]!.split(' ') : [];
    };
    const subsOf = (path: string): string[] =>
      new RegExp(`^ {4}'${path}'\\) echo '([^']*)'`, 'm').exec(script)?.[1]?.split(' ') ?? [];
    for (const extra of Object.values(HELP)) {
      for (const [cmd] of extra.examples) {
        const words = shellQuote.parse(cmd).filter((w): w is string => typeof w === 'string');
        if (words[0] !== 'agyctl') continue;
        let path = '';
        for (const w of words.slice(1)) {
          if (w.startsWith('--')) expect(optionsOf(path), `${cmd}: ${w}`).toContain(w);
          else if (subsOf(path).includes(w)) path = path ? `${path} ${w}` : w;
        }
      }
    }
  });

  it('exit-code lines name only options their command has', async () => {
    const script = (await liveTree()).completion.script;
    const opts = script.slice(script.indexOf('_agyctl_opts'));
    // The program's own list ('') sums up every command's.
    for (const [path, extra] of Object.entries(HELP).filter(([p]) => p !== '')) {
      const own = new RegExp(`^ {4}'${path}'\\) echo '([^']*)'`, 'm').exec(opts)?.[1]?.split(' ') ?? [];
      for (const [, when] of extra.exits)
        for (const flag of when.replace(/`[^`]*`/g, '').match(/--[a-z][a-z-]*/g) ?? [])
          expect(own, `${path}: ${when}`).toContain(flag);
    }
  });
});

describe('agyctl completion', () => {
  it('is generated from the program as it is: a command added to the tree completes too', () => {
    const program = new Command('agyctl').option('--profile <name>', 'profile');
    program.command('backup').option('--to <dir>', 'where');
    program
      .command('later-added')
      .description('a command another change registers')
      .command('deep')
      .option('--depth <n>', 'how deep');
    for (const shell of ['bash', 'zsh', 'fish'] as const)
      expect(completionScript(program, shell)).toContain('later-added');
    expect(describeTree(program).map((c) => c.path)).toEqual(['', 'backup', 'later-added', 'later-added deep']);
    expect(completionScript(program, 'bash')).toContain(`'later-added deep') echo '--depth --help --profile`);
    expect(completionScript(program, 'fish')).toContain(
      `complete -c agyctl -n '__agyctl_at \\'later-added deep\\'' -l depth -x -d 'how deep'`,
    );
  });

  it('offers the profile ids after --profile, and files after a <dir> option', async () => {
    const r = await runInProcess(['completion', 'bash']);
    expect(r.exit).toBe(0);
    expect(r.stdout).toContain(`--profile) COMPREPLY=( $(compgen -W 'antigravity gemini-cli' -- "$cur") )`);
    expect(r.stdout).toMatch(/--state-dir\|[^)]*--to[^)]*\) COMPREPLY=\( \$\(compgen -f/);
    const fish = await runInProcess(['completion', 'fish']);
    expect(fish.stdout).toContain(`-l profile -x -a 'antigravity gemini-cli'`);
    expect(fish.stdout).toContain(`complete -c agyctl -n '__agyctl_at \\'\\'' -a backup`);
  });

  it('an unknown shell is a usage error (exit 2)', async () => {
    const r = await runInProcess(['completion', 'tcsh']);
    expect(r.exit).toBe(2);
    expect(r.stderr).toMatch(/tcsh/);
  });
});
