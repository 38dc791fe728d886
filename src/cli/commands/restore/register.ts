/** agyctl restore SNAPSHOT: put conversations back from a snapshot (the server must be stopped). */
import type { Command } from 'commander';
import { type ActionFactory, collect } from '../../action.js';
import type { RestoreFlags } from './flags.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('restore')
    .description('restore conversations from a snapshot; refuses while a process has them open (stop the server first)')
    .argument('[snapshot]', 'snapshot directory, its name in the backup directory, or `latest` (or give --archive)')
    .option(
      '--archive <file|->',
      'restore from a tar stream written by `backup --archive` (FILE, or - for stdin); every hash is checked before anything is written',
    )
    .option('--session <id>', 'only this conversation (repeatable)', collect)
    .option('--from <dir>', 'backup directory to look SNAPSHOT up in (default: the default backup directory)')
    .option(
      '--force',
      'restore even though /proc shows a process holding the database (never overrides a failed SQLite lock)',
    )
    .option('--dry-run', 'show what would be replaced, added and kept, and who holds the files; change nothing')
    .option(
      '--prove',
      'after restoring, have a fresh server load every restored session and check its replayed history (exit 6 if any fails)',
    )
    .option('--prove-timeout <duration>', 'deadline of each server call while proving', '60s')
    .option(
      '--timeout <duration>',
      "as root on another user's state dir: deadline of the restore run as that user (then it is stopped, exit 5)",
      '1h',
    )
    .option(
      '--from-other-source',
      'restore a snapshot taken of another state dir (another path, user or host), e.g. when moving to a new box; refused without it',
    )
    .action(
      action<RestoreFlags>(async (io, { args, options }) => {
        (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'restore');
        const { restoreCommand } = await import('./handler.js');
        return restoreCommand(io, typeof args[0] === 'string' ? args[0] : undefined, options);
      }),
    );
}
