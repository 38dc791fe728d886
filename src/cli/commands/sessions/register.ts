/**
 * agyctl sessions: every conversation in the state dir, newest first, from the file system and /proc only;
 * and `sessions export [SNAPSHOT]`: each session's replayed history as Markdown or JSONL (docs/backup.md).
 */
import type { Command } from 'commander';
import { type ActionFactory, collect } from '../../action.js';
import { ownerTimeoutOption } from '../../globals.js';
import type { ExportFlags } from './export-handler.js';
import type { SessionsFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  const sessions = ownerTimeoutOption(
    program
      .command('sessions')
      .description('list conversations: id, cwd, size of db + WAL, last change, and which process has it open'),
  ).action(
    action<SessionsFlags>(async (io, input) => (await import('./handler.js')).sessionsCommand(io, input), {
      readsStateDir: true,
    }),
  );
  sessions
    .command('export')
    .description(
      'write each session as a fresh server replays it, one file per session (Markdown or JSONL); from a snapshot, or a consistent copy of the live state dir',
    )
    .argument(
      '[snapshot]',
      'snapshot directory, its name in the backup directory, or `latest` (default: the live state dir)',
    )
    .option('--session <id>', 'only this conversation (repeatable)', collect)
    .option('--format <md|jsonl>', 'md for people (default), jsonl for tools (one message per line: role, text, index)')
    .option(
      '--out <dir|->',
      'directory for the <id>.md / <id>.jsonl files (default: the current directory), or - for stdout',
    )
    .option('--from <dir>', 'backup directory to look SNAPSHOT up in (default: the default backup directory)')
    .option(
      '--busy-timeout <duration>',
      'live state dir: how long to retry a locked or changing database (default 10s)',
    )
    .option('--load-timeout <duration>', 'deadline of each server call while replaying (default 60s)')
    .action(action<ExportFlags>(async (io, input) => (await import('./export-handler.js')).exportCommand(io, input)));
}
