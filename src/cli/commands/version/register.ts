/** agyctl version: what a bug report needs, with the SQLite binding loaded and queried (the role's health check). */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('version')
    .description(
      "print agyctl's, Node's and SQLite's versions and where the SQLite binding was loaded from (exit 1, with the fix, when it cannot load)",
    )
    .action(action(async (io) => (await import('./handler.js')).versionCommand(io)));
}
