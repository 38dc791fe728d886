/** `agyctl connect`: flags -> ConnectOptions -> one host (src/connect/host-session.ts) or a fleet (src/connect/fleet-connect.ts). */

import type { ConnectOptions } from '../../../connect/connect-options.js';
import type { ConnectEmit } from '../../../connect/events.js';
import { usageError } from '../../../core/errors.js';
import { resolveUserPath } from '../../../core/paths.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';
import type { ConnectPrinter } from './printer.js';

/** connect's flags, as commander gives them (register.ts declares them). */
export interface ConnectFlags {
  inventory: string | undefined;
  limit: string | undefined;
  force: boolean | undefined;
  remoteAgyctl: string;
  sshOption: string[] | undefined;
  method: string | undefined;
  timeout: string;
  sshTimeout: string;
  /** `--no-open` makes it false. */
  open: boolean;
}

export async function connectCommand(io: HandlerIO, input: HandlerArgs<ConnectFlags>): Promise<CommandResult> {
  const options = await connectOptions(io, input);
  const printer: ConnectPrinter = io.out.json
    ? new (await import('./json-printer.js')).JsonPrinter(io.out)
    : new (await import('./text-printer.js')).TextPrinter(io);
  const emit: ConnectEmit = (event, redraw) => printer.event(event, redraw);
  if (!options.fleet) return (await import('../../../connect/host-session.js')).runConnect(io, options, emit);
  return (await import('../../../connect/fleet-connect.js')).runFleetConnect({ io, options, emit });
}

/** The flags checked, and the hosts found (the arguments, or the inventory read with Ansible). */
async function connectOptions(
  io: HandlerIO,
  { args, options: flags }: HandlerArgs<ConnectFlags>,
): Promise<ConnectOptions> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const { durationArg } = await import('../../../util/duration.js');
  const { validateSshOption } = await import('../../../connect/remote-command.js');
  const { method } = flags;
  if (method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(method))
    throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(method)}).`);
  const remoteAgyctl = flags.remoteAgyctl.trim();
  if (remoteAgyctl === '')
    throw usageError(
      '--remote-agyctl is empty.',
      'pass the command that runs agyctl on the remote box, e.g. --remote-agyctl ~/.local/bin/agyctl',
    );
  const timeoutMs = parseDurationOption('--timeout', flags.timeout);
  const sshOptions = (flags.sshOption ?? []).map(validateSshOption);
  const sshTimeoutMs = parseDurationOption('--ssh-timeout', flags.sshTimeout);
  const destinations = (args[0] as string[] | undefined) ?? [];
  const { inventory, limit } = flags;
  if (limit !== undefined && inventory === undefined) throw usageError('--limit needs --inventory.');
  if (inventory !== undefined && destinations.length > 0)
    throw usageError('pass hosts either as arguments or with --inventory, not both.');
  if (inventory === undefined && destinations.length === 0)
    throw usageError(
      'connect needs a destination (or several, or --inventory FILE).',
      'e.g. agyctl connect me@box.example.com',
    );
  const { readInventory, targetsFromArgs } = await import('../../../connect/inventory.js');
  return {
    targets:
      inventory === undefined
        ? targetsFromArgs(destinations)
        : await readInventory(resolveUserPath(io.ctx.cwd, inventory, io.ctx.env), limit, io.ctx.env),
    fleet: inventory !== undefined || destinations.length > 1,
    sshOptions,
    remoteAgyctl,
    method,
    // The remote agyctl may be older than this one: it gets the value in units every version reads.
    timeout: durationArg(timeoutMs),
    timeoutMs,
    open: flags.open,
    sshTimeoutMs,
    force: flags.force === true,
  };
}
