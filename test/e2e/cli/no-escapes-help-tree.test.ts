/**
 * With NO_COLOR=1, with TERM=dumb and with --no-color, no command of the help
 * tree (test/helpers/help-tree.ts: a new command is walked without this file
 * changing) writes an escape sequence in its `--help` or in its usage error
 * for an unknown flag: on a pseudo-terminal in each of the three modes, and
 * on a pipe, where the modes take turns from command to command (nothing is
 * coloured for a pipe in any mode; all three on every command would triple
 * the file's minute for no more). The commands' main runs, prompts and
 * progress are no-escapes-runs.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { makeSandbox, type Sandbox } from '../../helpers/cli.js';
import {
  COLOUR_ALLOWED,
  escapesIn,
  type Line,
  NO_COLOUR_MODES,
  problemsOf,
  runLines,
  type Seen,
} from '../../helpers/escapes.js';
import { helpTree, type TreeCommand } from '../../helpers/help-tree.js';

let sb: Sandbox;
let tree: TreeCommand[];
beforeAll(async () => {
  sb = makeSandbox();
  tree = await helpTree(sb);
}, 120_000);

/** Every command's --help (exit 0, its usage) and its usage error for an unknown flag (exit 2). */
const wordsOfTree = (): string[][] =>
  tree.flatMap((cmd) => [
    [...cmd.path, '--help'],
    [...cmd.path, '--no-such-flag'],
  ]);
const exits = (s: Seen): number[] => (s.argv.at(-1) === '--help' ? [0] : [2]);
const usageMissing = (seen: Seen[]): string[] =>
  seen
    .filter((s) => s.argv.at(-1) === '--help' && !s.bytes.toString('utf8').includes('Usage: agyctl'))
    .map((s) => `${s.mode} ${s.argv.join(' ')}: no usage`);

describe('the walk', () => {
  it('covers the help tree, and with colour allowed a terminal gets escapes (the control)', async () => {
    const names = tree.map((cmd) => cmd.path.join(' '));
    expect(names).toEqual(expect.arrayContaining(['', 'backup verify', 'login status', 'server install', 'version']));
    const [check] = await runLines(sb, [{ argv: ['check'], mode: COLOUR_ALLOWED }], true, 60_000);
    expect(escapesIn(check!.bytes)).not.toEqual([]);
    const [piped] = await runLines(sb, [{ argv: ['check'], mode: COLOUR_ALLOWED }], false, 60_000);
    expect(piped!.bytes.toString('utf8')).toContain('settings');
    expect(escapesIn(piped!.bytes)).toEqual([]);
  }, 60_000);
});

describe.each(NO_COLOUR_MODES)('with %s, on a pseudo-terminal', (mode) => {
  it("every command's --help and usage error have no escape sequence", async () => {
    const seen = await runLines(
      sb,
      wordsOfTree().map((argv) => ({ argv, mode })),
      true,
      170_000,
    );
    expect([...problemsOf(seen, exits), ...usageMissing(seen)]).toEqual([]);
  }, 180_000);
});

describe('on a pipe, the modes taking turns', () => {
  it("every command's --help and usage error have no escape sequence", async () => {
    const lines: Line[] = wordsOfTree().map((argv, i) => ({
      argv,
      mode: NO_COLOUR_MODES[i % NO_COLOUR_MODES.length]!,
    }));
    const seen = await runLines(sb, lines, false, 170_000);
    expect([...problemsOf(seen, exits), ...usageMissing(seen)]).toEqual([]);
  }, 180_000);
});
