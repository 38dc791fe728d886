/** agyctl sessions: every conversation in the state dir, newest first, from the file system and /proc only. */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import { ownerTimeoutOption } from '../../as-owner.js';
import { registerExport } from './export-register.js';
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
  registerExport(sessions, action);
}
