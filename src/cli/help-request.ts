/**
 * `agyctl help …` answered by agyctl itself: commander's own help command
 * takes one word and only as argv[0], so `agyctl --json help exit-codes`,
 * `agyctl help settings set-auth` and `agyctl help logn` all printed the
 * general usage. Global options may stand anywhere around the words.
 */
import type { Command } from 'commander';
import { AgyError, EXIT } from '../core/errors.js';
import { nearest } from './usage-error.js';

export const EXIT_CODES_TOPIC = 'exit-codes';

/** The words of argv that are neither options nor option values, as the program's options read them. */
function words(program: Command, argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') break;
    if (!token.startsWith('-') || token === '-') {
      out.push(token);
      continue;
    }
    const name = token.split('=')[0];
    const option = program.options.find((o) => o.long === name || o.short === name);
    if (option && (option.required || option.optional) && !token.includes('=')) i++;
  }
  return out;
}

/** The topic words after `help`, or undefined when this run is not a request for help. */
export function helpTopic(program: Command, argv: readonly string[]): string[] | undefined {
  const [first, ...rest] = words(program, argv);
  return first === 'help' ? rest : undefined;
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
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
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
