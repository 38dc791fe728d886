/** agyctl backup [verify SNAPSHOT]: consistent snapshots of live conversation databases (docs/backup.md). */
import type { Command } from 'commander';
import { type ActionFactory, collect } from '../../action.js';
import type { BackupFlags, ListFlags, SnapshotArchiveFlags, VerifyFlags } from './flags.js';

export function register(program: Command, action: ActionFactory): void {
  const backup = program
    .command('backup')
    .description('snapshot every conversation into DIR/<UTC timestamp>/ (a checked copy; safe while the server runs)')
    .option('--to <dir>', 'backup directory (default $XDG_STATE_HOME/agyctl/backups or ~/.local/state/agyctl/backups)')
    .option('--session <id>', 'only this conversation (repeatable)', collect)
    .option('--keep-last <n>', 'after a complete run, keep the N newest snapshots')
    .option('--keep-daily <n>', 'after a complete run, keep the newest snapshot of each of the last N days (UTC)')
    .option('--keep-weekly <n>', 'after a complete run, keep the newest snapshot of each of the last N ISO weeks')
    .option(
      '--dry-run',
      'write and remove nothing: show what a run now would snapshot and what retention would remove (like restic forget --dry-run)',
    )
    .option(
      '--busy-timeout <duration>',
      'how long to retry a locked or changing database before reporting it failed',
      '10s',
    )
    .option(
      '--compact',
      'compact every new snapshot with VACUUM INTO (by default only those whose free pages exceed 25%)',
    )
    .option('--jobs <n>', 'sessions snapshotted at once, in worker threads (default: the number of cores, at most 8)')
    .option(
      '--archive <file|->',
      'also write the new snapshot as one tar stream to FILE or stdout (-), e.g. for restic backup --stdin',
    )
    .option(
      '--max-bytes <size>',
      "as root on a user's state dir: the most one run takes from the user's side (e.g. 500M, 64G; default 16G)",
    )
    .option('--prometheus <file>', "write backup metrics to FILE for node_exporter's textfile collector")
    .option(
      '--prove',
      'then prove the new snapshot as `backup verify --prove` does, and record what the server replayed (replay.json)',
    )
    .option('--prove-timeout <duration>', 'deadline of each server call while proving (default 60s)')
    .option(
      '--timeout <duration>',
      "as root on another user's state dir: deadline of the snapshot taken as that user (then it is stopped, exit 5)",
      '1h',
    )
    .action(
      action<BackupFlags>(
        async (io, { options }) => {
          (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'backup');
          const { backupCommand } = await import('./handler.js');
          return backupCommand(io, options);
        },
        { readsStateDir: true },
      ),
    );
  backup
    .command('list')
    .description('list the complete snapshots in the backup directory, newest first: sessions, size, failures, proven')
    .option(
      '--from <dir>',
      'backup directory (default $XDG_STATE_HOME/agyctl/backups or ~/.local/state/agyctl/backups)',
    )
    .action(action<ListFlags>(async (io, { options }) => (await import('./list.js')).listCommand(io, options)));
  program
    .command('__snapshot-archive', { hidden: true })
    .description("internal: root's `backup` runs it as the state dir's owner")
    .option('--session <id>', 'only this conversation (repeatable)', collect)
    .option('--busy-timeout <duration>', 'how long to retry a locked database', '10s')
    .option('--compact', 'compact every new snapshot with VACUUM INTO')
    .option('--jobs <n>', 'sessions snapshotted at once')
    .option('--plan', 'only list the sessions a run would back up')
    .option('--previous-stdin', "root's previous snapshot on stdin: send unchanged sessions without their database")
    .action(
      action<SnapshotArchiveFlags>(async (io, { options }) =>
        (await import('./as-owner.js')).snapshotArchiveCommand(io, options),
      ),
    );
  backup
    .command('verify')
    .description('re-hash and integrity-check every file of a snapshot against its manifest (exit 6 on any mismatch)')
    .argument('<snapshot>', 'snapshot directory, its name in the backup directory, or `latest`')
    .option('--from <dir>', 'backup directory to look SNAPSHOT up in (default: the default backup directory)')
    .option(
      '--prove',
      'also restore it into a scratch state dir, have a fresh server load every session and compare its history with the recorded replay (recording one when there is none)',
    )
    .option('--prove-timeout <duration>', 'deadline of each server call while proving', '60s')
    .action(
      action<VerifyFlags>(async (io, { args, options }) => {
        const { verifyCommand } = await import('./verify.js');
        // `backup` has --prove and --prove-timeout too, and commander gives a flag to the parent wherever it stands.
        const inherited = backup.opts<{ prove?: boolean; proveTimeout?: string }>();
        const shared = ['prove', 'proveTimeout'];
        const backupOnly = backup.options
          .filter(
            (option) =>
              !shared.includes(option.attributeName()) && backup.getOptionValueSource(option.attributeName()) === 'cli',
          )
          .map((option) => option.long ?? option.flags);
        return verifyCommand(io, String(args[0]), {
          ...options,
          backupOnly,
          prove: options.prove === true || inherited.prove === true,
          proveTimeout: inherited.proveTimeout ?? options.proveTimeout,
        });
      }),
    );
}
