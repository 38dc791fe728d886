/**
 * commander's parse errors as agyctl usage errors (exit 2): one line that
 * names the command whose help to read, and for a mistyped subcommand the
 * nearest one. commander alone says "too many arguments for 'show'" for
 * `settings shwo` (show is the default) and takes `agyctl verbose` for a
 * command.
 */
import type { Command, CommanderError } from 'commander';
import { AgyError, EXIT } from '../core/errors.js';

interface Located {
  command: Command;
  /** `agyctl settings`, as typed. */
  path: string;
  /** The first word that is neither an option, an option's value nor a subcommand. */
  word: string | undefined;
}

/** A command's options and those of the commands above it, which commander also reads after it. */
export const optionsOf = (command: Command): Command['options'][number][] => {
  const all = [];
  for (let c: Command | null = command; c; c = c.parent) all.push(...c.options);
  return all;
};

/** Walk argv down the command tree as commander does, skipping options and their values. */
export function locate(program: Command, argv: readonly string[]): Located {
  let command = program;
  const path = ['agyctl'];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') return { command, path: path.join(' '), word: argv[i + 1] };
    if (token.startsWith('-')) {
      const name = token.split('=')[0];
      const option = optionsOf(command).find((candidate) => candidate.long === name || candidate.short === name);
      if (option && (option.required || option.optional) && !token.includes('=')) i++;
      continue;
    }
    const sub = command.commands.find((c) => c.name() === token || c.aliases().includes(token));
    if (!sub) return { command, path: path.join(' '), word: token };
    command = sub;
    path.push(token);
  }
  return { command, path: path.join(' '), word: undefined };
}

/** Optimal string alignment distance: edits, with a swap of neighbours counted as one. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]) as number[][];
  for (let j = 0; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** The closest candidate within a third of the word's length (at least one edit), if any. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = distance(word.toLowerCase(), name.toLowerCase());
    if (d <= Math.max(1, Math.floor(word.length / 3)) && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** `agyctl verbose` means `agyctl --verbose`; a mistyped subcommand means the nearest one. */
function misspelledSubcommand(at: Located): AgyError | undefined {
  const { command, path, word } = at;
  if (word === undefined || command.commands.length === 0) return undefined;
  const visible = command
    .createHelp()
    .visibleCommands(command)
    .map((c) => c.name())
    .filter((name) => name !== 'help');
  const asOption = command.options.find((option) => option.long === `--${word}`)?.long;
  const sub = asOption ? undefined : nearest(word, visible);
  const fix = asOption ?? sub;
  return new AgyError(EXIT.usage, 'usage', `unknown command '${word}' for '${path}'.`, {
    hint:
      fix === undefined
        ? `${path} has these subcommands: ${visible.join(', ')} (run \`${path} --help\`)`
        : `did you mean \`${path} ${fix}\`? (run \`${path} --help\` for usage)`,
  });
}

/** What a missing argument is, from its description (`settings set-auth` lists the auth types there). */
function missingArgumentHint(at: Located): string | undefined {
  const missing = at.command.registeredArguments.find((a) => a.required && a.description);
  return missing ? `give <${missing.name()}>: ${missing.description} (run \`${at.path} --help\` for usage)` : undefined;
}

/**
 * `backup --from DIR list`: an option of a subcommand given before it. The hint is the right order,
 * the option after the subcommand.
 */
function optionOfLaterSubcommand(program: Command, argv: readonly string[], message: string): string | undefined {
  const flag = /unknown option '([^']+)'/.exec(message)?.[1]?.split('=')[0];
  if (!flag) return undefined;
  const i = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (i < 0) return undefined;
  // The command the option was given to: where argv stands at the flag.
  const at = locate(program, argv.slice(0, i));
  for (const sub of at.command.commands) {
    const j = argv.indexOf(sub.name(), i + 1);
    if (j < 0) continue;
    const option = sub.options.find((o) => o.long === flag || o.short === flag);
    if (!option) continue;
    const width = argv[i] === flag && (option.required || option.optional) ? 2 : 1;
    const given = argv.slice(i, i + width);
    const rest = [...argv.slice(0, i), ...argv.slice(i + width)];
    const k = rest.indexOf(sub.name(), i);
    const fixed = [...rest.slice(0, k + 1), ...given, ...rest.slice(k + 1)];
    return `${flag} belongs to \`${at.path} ${sub.name()}\`, after it: \`agyctl ${fixed.join(' ')}\``;
  }
  return undefined;
}

export function usageErrorFrom(err: CommanderError, program: Command, argv: readonly string[]): AgyError {
  const at = locate(program, argv);
  if (err.code === 'commander.unknownOption') {
    const order = optionOfLaterSubcommand(program, argv, err.message);
    if (order) return new AgyError(EXIT.usage, 'usage', err.message.replace(/^error:\s*/i, ''), { hint: order });
  }
  if (err.code === 'commander.unknownCommand' || err.code === 'commander.excessArguments') {
    const typo = misspelledSubcommand(at);
    if (typo) return typo;
  }
  const message = err.message.replace(/^error:\s*/i, '').replace(/\n\(Did you mean .*\)$/s, '');
  const hint =
    (err.code === 'commander.missingArgument' ? missingArgumentHint(at) : undefined) ??
    `run \`${at.path} --help\` for usage`;
  return new AgyError(EXIT.usage, 'usage', message, { hint });
}
