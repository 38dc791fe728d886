/**
 * With NO_COLOR=1, with TERM=dumb and with --no-color, no command of the help
 * tree (test/helpers/help-tree.ts: a new command is walked without this file
 * changing) writes an escape sequence in its `--help` or in its usage error
 * for an unknown flag: on a pseudo-terminal in each mode, and on a pipe with
 * the modes taking turns. The commands' main runs, prompts and progress are
 * no-escapes-runs.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { COLOUR_ALLOWED, escapesIn, NO_COLOUR_MODES, problemsOf, runLines, type Seen } from '../../helpers/escapes.js';
import { useHelpTree } from '../../helpers/help-tree.js';

const walked = useHelpTree();

/** Every command's --help (exit 0, its usage) and its usage error for an unknown flag (exit 2). */
const wordsOfTree = (): string[][] =>
  walked.tree.flatMap((cmd) => [
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
    const names = walked.tree.map((cmd) => cmd.path.join(' '));
    expect(names).toEqual(expect.arrayContaining(['', 'backup verify', 'login status', 'server install', 'version']));
    const [check] = await runLines(walked.sb, [{ argv: ['check'], mode: COLOUR_ALLOWED }], true, 60_000);
    expect(escapesIn(check!.bytes)).not.toEqual([]);
    const [piped] = await runLines(walked.sb, [{ argv: ['check'], mode: COLOUR_ALLOWED }], false, 60_000);
    expect(piped!.bytes.toString('utf8')).toContain('settings');
    expect(escapesIn(piped!.bytes)).toEqual([]);
  }, 60_000);
});

// The lists run side by side: nothing here writes to the sandbox.
describe.concurrent('every command of the help tree', () => {
  for (const mode of NO_COLOUR_MODES)
    it(`with ${mode.name}, on a pseudo-terminal: --help and the usage error have no escape sequence`, async () => {
      const seen = await runLines(
        walked.sb,
        wordsOfTree().map((argv) => ({ argv, mode })),
        true,
        170_000,
      );
      expect([...problemsOf(seen, exits), ...usageMissing(seen)]).toEqual([]);
    }, 180_000);

  // A pipe is never coloured, in any mode (colour needs a terminal): the modes take turns from command
  // to command, so every command runs on a pipe and every mode does, at a third of the node starts.
  it('on a pipe, the modes taking turns: --help and the usage error have no escape sequence', async () => {
    const seen = await runLines(
      walked.sb,
      wordsOfTree().map((argv, i) => ({ argv, mode: NO_COLOUR_MODES[Math.floor(i / 2) % NO_COLOUR_MODES.length]! })),
      false,
      170_000,
    );
    expect([...problemsOf(seen, exits), ...usageMissing(seen)]).toEqual([]);
  }, 180_000);
});
