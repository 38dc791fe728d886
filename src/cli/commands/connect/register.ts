/** agyctl connect: from the laptop, log a remote box in over SSH in one step (login there, tunnel, browser here). */
import type { Command } from 'commander';
import { type ActionFactory, collect } from '../../action.js';
import type { ConnectFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('connect')
    .description(
      'from your laptop: run `agyctl login` on a remote box over SSH, forward its callback port here, open the sign-in URL in your browser',
    )
    .argument(
      '[destinations...]',
      '[user@]host, as you would pass it to ssh; several hosts are logged in one after the other',
    )
    .option(
      '--inventory <file>',
      'the hosts of an Ansible inventory (read with ansible-inventory), or a file with one host per line',
    )
    .option('--limit <pattern>', 'with --inventory: only the hosts matching this Ansible pattern')
    .option(
      '--force',
      'log in even where `agyctl check --live` passes (a box already signed in is otherwise left as it is)',
    )
    .option('--remote-agyctl <command>', 'how to run agyctl on the remote box (a shell command prefix)', 'agyctl')
    .option('--ssh-option <option>', 'an ssh_config setting passed as `ssh -o OPTION` (repeatable)', collect)
    .option('--method <id>', 'auth method for the remote login (default: its settings, else oauth-personal)')
    .option('--timeout <duration>', 'how long the remote login waits for the sign-in', '10m')
    .option('--ssh-timeout <duration>', 'deadline for SSH to connect (a password prompt counts)', '90s')
    .option('--no-open', 'print the URL instead of opening a browser')
    .action(
      action<ConnectFlags>(async (io, input) => (await import('./handler.js')).connectCommand(io, input), {
        streaming: true,
      }),
    );
}
