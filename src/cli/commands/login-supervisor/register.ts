/**
 * `agyctl __login-supervisor --record DIR` (hidden): the process a login
 * runs in. It reads the login's options from DIR/request.json, runs the
 * ordinary login (src/login/run-login.ts) with streams that record what it
 * prints for attached clients, and records the outcome. Started only by
 * src/login/detached/supervisor.ts, in its own session.
 */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import type { SupervisorFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('__login-supervisor', { hidden: true })
    .description('internal: runs a login for `agyctl login`')
    .requiredOption('--record <dir>', 'the login record directory')
    .action(
      action<SupervisorFlags>(async (io, input) => (await import('./handler.js')).supervisorCommand(io, input), {
        streaming: true,
      }),
    );
}
