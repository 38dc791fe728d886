/**
 * agyctl completion bash|zsh|fish: a completion script generated from the program's live command tree;
 * the hidden `agyctl __complete snapshots [--from DIR]` those scripts call for snapshot names; and the hidden
 * `agyctl --json __man-pages`, the man pages from the same tree.
 */
import { Argument, type Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import type { CompleteFlags, CompletionFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish) for every command and option of this agyctl')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(
      action<CompletionFlags>(async (io, input) =>
        // `program` is the root: generated at run time, it holds every command registered by then.
        (await import('./handler.js')).completionCommand(io, input, program),
      ),
    );
  program
    .command('__complete', { hidden: true })
    .description('values for shell completion, one per line (used by the completion scripts)')
    .addArgument(new Argument('<kind>', 'what to list').choices(['snapshots']))
    .option('--from <dir>', 'backup directory (default: the default backup directory)')
    .action(action<CompleteFlags>(async (io, input) => (await import('./handler.js')).completeValues(io, input)));
  program
    .command('__man-pages', { hidden: true })
    .description(
      "every command's man page as roff, in one JSON document with --json (used by the release and npm pack)",
    )
    .action(action<CompletionFlags>(async (io) => (await import('./handler.js')).manPagesCommand(io, program)));
}
