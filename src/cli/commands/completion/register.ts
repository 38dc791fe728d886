/** agyctl completion bash|zsh|fish: a completion script generated from the program's live command tree. */
import { Argument, type Command } from 'commander';
import { EXIT } from '../../../core/errors.js';
import type { ActionFactory } from '../../action.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish) for every command and option of this agyctl')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(
      action(async (io, { args }) => {
        const { completionScript } = await import('../../completion.js');
        const shell = args[0] as 'bash' | 'zsh' | 'fish';
        // `program` is the root: generated at run time, it holds every command registered by then.
        const script = completionScript(program, shell);
        io.out.print(script.trimEnd());
        return { exit: EXIT.ok, data: { completion: { shell, script } } };
      }),
    );
}
