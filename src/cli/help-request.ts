/**
 * `agyctl help …` and `agyctl A help …` answered by agyctl itself: commander's
 * own help command takes one word and only as argv[0], so `agyctl --json help
 * exit-codes`, `agyctl help settings set-auth` and `agyctl help logn` all
 * printed the general usage. Global options may stand anywhere around the words.
 */
import type { Command } from 'commander';
import { AgyError, EXIT } from '../core/errors.js';
import { nearest, optionsOf } from './usage-error.js';

export const EXIT_CODES_TOPIC = 'exit-codes';

const subcommandOf = (command: Command, word: string): Command | undefined =>
  command.commands.find((c) => c.name() === word || c.aliases().includes(word));

/** The words of argv that are neither options nor option values, each option read by the command it follows. */
function words(program: Command, argv: readonly string[]): string[] {
  const out: string[] = [];
  let command = program;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') break;
    if (!token.startsWith('-') || token === '-') {
      out.push(token);
      command = subcommandOf(command, token) ?? command;
      continue;
    }
    const name = token.split('=')[0];
    const option = optionsOf(command).find((o) => o.long === name || o.short === name);
    if (option && (option.required || option.optional) && !token.includes('=')) i++;
  }
  return out;
}

/**
 * The topic words of a request for help, or undefined when this run is not one: `help A B`, and `A help B`
 * wherever A has subcommands (commander offers `help` on some commands only, and only one word deep).
 * Where a command takes no subcommand, `help` is an argument (`restore help` names a snapshot).
 */
export function helpTopic(program: Command, argv: readonly string[]): string[] | undefined {
  const said = words(program, argv);
  let command = program;
  for (const [i, word] of said.entries()) {
    if (command.commands.length === 0) return undefined;
    if (word === 'help') return [...said.slice(0, i), ...said.slice(i + 1)];
    const sub = subcommandOf(command, word);
    if (!sub) return undefined;
    command = sub;
  }
  return undefined;
}

const visibleNames = (cmd: Command): string[] =>
  cmd
    .createHelp()
    .visibleCommands(cmd)
    .map((c) => c.name())
    .filter((name) => name !== 'help');

/** The command `help a b` is about, or a usage error naming the nearest one for a mistyped word. */
export function helpTarget(program: Command, topic: readonly string[]): Command {
  let command = program;
  const path: string[] = [];
  for (const word of topic) {
    // `help help`: the help command's own help is its command's usage, which lists it.
    if (word === 'help') continue;
    const sub = subcommandOf(command, word);
    if (!sub) {
      const candidates = [...visibleNames(command), ...(command === program ? [EXIT_CODES_TOPIC] : [])];
      const fix = nearest(word, candidates);
      const at = ['agyctl help', ...path].join(' ');
      throw new AgyError(EXIT.usage, 'usage', `no help topic '${word}' for '${at}'.`, {
        hint:
          fix === undefined
            ? `the topics are: ${candidates.join(', ')} (run \`${at}\` for the list)`
            : `did you mean \`${at} ${fix}\`?`,
      });
    }
    command = sub;
    path.push(word);
  }
  return command;
}
