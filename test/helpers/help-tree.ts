/**
 * The command tree as a user finds it: `agyctl --help`, then each command's
 * `--help`, down every "Commands:" section. Tests that check a class of
 * behaviour on every command walk it, so a new command is walked without a
 * test being edited (hidden commands are not listed, so not walked).
 */
import { beforeAll, expect } from 'vitest';
import { agyctl, makeSandbox, type Sandbox } from './cli.js';

export interface TreeCommand {
  /** The words after `agyctl`: `[]` for the program, `['backup', 'verify']`. */
  path: string[];
  /** Its `--help`, as a pipe gets it (80 columns; a wrapped line goes on indented under its start). */
  help: string;
  /** The names its "Commands:" section lists, `help` included where commander lists it. */
  subcommands: string[];
}

/** The lines of a `--help` section ("Options:", "Commands:") up to the next blank line. */
export function sectionOf(text: string, title: string): string[] {
  const lines = text.split('\n');
  const at = lines.indexOf(title);
  if (at < 0) return [];
  const end = lines.findIndex((line, i) => i > at && line.trim() === '');
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

/** The usage line's words after the command path: `[options] <snapshot>`. */
export function usageOf(cmd: TreeCommand): string {
  const first = cmd.help.split('\n')[0] ?? '';
  return first
    .replace(/^Usage: agyctl /, '')
    .replace(cmd.path.join(' '), '')
    .trim();
}

/** Every command below and including `agyctl`, `help` left out (it has no `--help` of its own). */
export async function helpTree(sb: Sandbox): Promise<TreeCommand[]> {
  const found: TreeCommand[] = [];
  const walk = async (path: string[]): Promise<void> => {
    const r = await agyctl([...path, '--help'], sb);
    expect(r.exitCode, `${path.join(' ')} --help: ${r.stderr}`).toBe(0);
    const subcommands = sectionOf(r.stdout, 'Commands:')
      .map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);
    found.push({ path, help: r.stdout, subcommands });
    for (const sub of subcommands) if (sub !== 'help') await walk([...path, sub]);
  };
  await walk([]);
  return found;
}

/** A file's sandbox and the tree walked in it, both made before the file's first test. */
export function useHelpTree(): { readonly sb: Sandbox; readonly tree: TreeCommand[] } {
  const walked = {} as { sb: Sandbox; tree: TreeCommand[] };
  beforeAll(async () => {
    walked.sb = makeSandbox();
    walked.tree = await helpTree(walked.sb);
  }, 120_000);
  return walked;
}
