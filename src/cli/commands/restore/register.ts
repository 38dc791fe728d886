/** agyctl restore SNAPSHOT: put conversations back from a snapshot (the server must be stopped). */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import { collect } from '../../repeatable.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('restore')
    .description('restore conversations from a snapshot; refuses while a process has them open (stop the server first)')
    .argument('<snapshot>', 'snapshot directory, its name in the backup directory, or `latest`')
    .option('--session <id>', 'only this conversation (repeatable)', collect)
    .option('--from <dir>', 'backup directory to look SNAPSHOT up in (default: the default backup directory)')
    .option('--force', 'restore even though /proc shows a process holding the database (never overrides a failed SQLite lock)')
    .action(
      action(async (io, { args, options }) => {
        (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'restore');
        const { restoreCommand } = await import('../backup/handler.js');
        return restoreCommand(io, args[0] as string, options);
      }),
    );
}
