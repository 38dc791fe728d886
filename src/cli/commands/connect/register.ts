/** agyctl connect: from the laptop, log a remote box in over SSH in one step (login there, tunnel, browser here). */
import path from 'node:path';
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import { collect } from '../../repeatable.js';
import { usageError } from '../../../core/errors.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('connect')
    .description('from your laptop: run `agyctl login` on a remote box over SSH, forward its callback port here, open the sign-in URL in your browser')
    .argument('[destinations...]', '[user@]host, as you would pass it to ssh; several hosts are logged in one after the other')
    .option('--inventory <file>', 'the hosts of an Ansible inventory (read with ansible-inventory), or a file with one host per line')
    .option('--limit <pattern>', 'with --inventory: only the hosts matching this Ansible pattern')
    .option('--force', 'several hosts: log in even where `agyctl check --live` passes')
    .option('--remote-agyctl <command>', 'how to run agyctl on the remote box (a shell command prefix)', 'agyctl')
    .option('--ssh-option <option>', 'an ssh_config setting passed as `ssh -o OPTION` (repeatable)', collect)
    .option('--method <id>', 'auth method for the remote login (default: its settings, else oauth-personal)')
    .option('--timeout <duration>', 'how long the remote login waits for the sign-in', '10m')
    .option('--ssh-timeout <duration>', 'deadline for SSH to connect (a password prompt counts)', '90s')
    .option('--no-open', 'print the URL instead of opening a browser')
    .action(
      action(
        async (io, { args, options }) => {
          const { parseDurationOption } = await import('../../parse-options.js');
          const { validateDestination, validateSshOption } = await import('../../../connect/remote-command.js');
          const { runConnect } = await import('../../../connect/run-connect.js');
          const method = options.method === undefined ? undefined : String(options.method);
          if (method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(method)) throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(method)}).`);
          const remoteAgyctl = String(options.remoteAgyctl).trim();
          if (remoteAgyctl === '') throw usageError('--remote-agyctl is empty.', 'pass the command that runs agyctl on the remote box, e.g. --remote-agyctl ~/.local/bin/agyctl');
          const timeout = String(options.timeout);
          const common = {
            sshOptions: ((options.sshOption as string[] | undefined) ?? []).map(validateSshOption),
            remoteAgyctl,
            method,
            timeout,
            timeoutMs: parseDurationOption('--timeout', timeout),
            open: options.open !== false,
            sshTimeoutMs: parseDurationOption('--ssh-timeout', String(options.sshTimeout)),
          };
          const destinations = (args[0] as string[] | undefined) ?? [];
          const inventory = options.inventory === undefined ? undefined : String(options.inventory);
          if (options.limit !== undefined && inventory === undefined) throw usageError('--limit needs --inventory.');
          if (inventory !== undefined && destinations.length > 0) throw usageError('pass hosts either as arguments or with --inventory, not both.');
          if (inventory === undefined && destinations.length === 0) throw usageError('connect needs a destination (or several, or --inventory FILE).', 'e.g. agyctl connect me@box.example.com');
          if (inventory === undefined && destinations.length === 1) return runConnect(io, { ...common, destination: validateDestination(destinations[0]!) });
          const { readInventory, targetsFromArgs } = await import('../../../connect/inventory.js');
          const { runFleetConnect } = await import('../../../connect/fleet.js');
          const targets = inventory === undefined ? targetsFromArgs(destinations) : await readInventory(path.resolve(io.ctx.cwd, inventory), options.limit === undefined ? undefined : String(options.limit), io.ctx.env);
          return runFleetConnect(io, targets, { ...common, force: Boolean(options.force) });
        },
        { streaming: true },
      ),
    );
}
