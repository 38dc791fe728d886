/** agyctl connect: from the laptop, log a remote box in over SSH in one step (login there, tunnel, browser here). */
import type { Command } from 'commander';
import type { ActionFactory } from '../action.js';
import { collect } from '../repeatable.js';
import { usageError } from '../../errors.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('connect')
    .description('from your laptop: run `agyctl login` on a remote box over SSH, forward its callback port here, open the sign-in URL in your browser')
    .argument('<destination>', '[user@]host, as you would pass it to ssh')
    .option('--remote-agyctl <command>', 'how to run agyctl on the remote box (a shell command prefix)', 'agyctl')
    .option('--ssh-option <option>', 'an ssh_config setting passed as `ssh -o OPTION` (repeatable)', collect)
    .option('--method <id>', 'auth method for the remote login (default: its settings, else oauth-personal)')
    .option('--timeout <duration>', 'how long the remote login waits for the sign-in', '10m')
    .option('--ssh-timeout <duration>', 'deadline for SSH to connect (a password prompt counts)', '90s')
    .option('--no-open', 'print the URL instead of opening a browser')
    .action(
      action(
        async (io, { args, options }) => {
          const { parseDurationOption } = await import('../parse-options.js');
          const { validateDestination, validateSshOption } = await import('../../connect/remote-command.js');
          const { runConnect } = await import('../../connect/run-connect.js');
          const method = options.method === undefined ? undefined : String(options.method);
          if (method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(method)) throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(method)}).`);
          const remoteAgyctl = String(options.remoteAgyctl).trim();
          if (remoteAgyctl === '') throw usageError('--remote-agyctl is empty.', 'pass the command that runs agyctl on the remote box, e.g. --remote-agyctl ~/.local/bin/agyctl');
          const timeout = String(options.timeout);
          return runConnect(io, {
            destination: validateDestination(String(args[0])),
            sshOptions: ((options.sshOption as string[] | undefined) ?? []).map(validateSshOption),
            remoteAgyctl,
            method,
            timeout,
            timeoutMs: parseDurationOption('--timeout', timeout),
            open: options.open !== false,
            sshTimeoutMs: parseDurationOption('--ssh-timeout', String(options.sshTimeout)),
          });
        },
        { streaming: true },
      ),
    );
}
