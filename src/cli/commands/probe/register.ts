/** agyctl probe: start the server, initialize, report what it is and how fast it came up, stop it; --sign-in: how it offers sign-in. */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import type { ProbeFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('probe')
    .description('start the server, run initialize, print its build, auth methods, capabilities and start-up time')
    .option(
      '--timeout <duration>',
      'deadline for the server to answer initialize (--sign-in: to show a sign-in URL)',
      '60s',
    )
    .option(
      '--sign-in',
      'also call authenticate and report how this build offers sign-in (channel, launcher, URL anatomy), without signing in',
    )
    .option('--method <id>', "with --sign-in: the auth method to call (default: the profile's browser method)")
    .option('--no-fake-display', 'with --sign-in: do not give the server a placeholder DISPLAY')
    .option(
      '--assumptions',
      'check what agyctl assumes about the server (docs/assumptions.md) on this box: held, differs or unknown; signs nothing in, creates no session, writes nothing in the state dir',
    )
    .action(action<ProbeFlags>(async (io, input) => (await import('./handler.js')).probeCommand(io, input)));
}
