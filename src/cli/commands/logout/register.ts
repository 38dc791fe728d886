/** agyctl logout: remove this box's credentials and confirm that a fresh server refuses them. */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import type { LogoutFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('logout')
    .description(
      'log the server out (its own logout when advertised, else remove acp_token.json), then confirm a fresh server refuses',
    )
    .option('--local', 'remove the token file without asking the server')
    .option('--timeout <duration>', 'deadline for each server start and call', '60s')
    .action(action<LogoutFlags>(async (io, input) => (await import('./handler.js')).logoutCommand(io, input)));
}
