/** `agyctl connect`: flags -> one host (src/connect/run-connect.ts) or a fleet (src/connect/fleet.ts). */
import path from 'node:path';
import type { ConnectEmit } from '../../../connect/events.js';
import { usageError } from '../../../core/errors.js';
import type { HandlerArgs } from '../../action.js';
import type { CommandResult, HandlerIO } from '../../context.js';
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

export async function connectCommand(
  io: HandlerIO,
  { args, options }: HandlerArgs<ConnectFlags>,
): Promise<CommandResult> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const { durationArg } = await import('../../../util/duration.js');
  const { validateDestination, validateSshOption } = await import('../../../connect/remote-command.js');
  const { runConnect } = await import('../../../connect/run-connect.js');
  const printer: ConnectPrinter = io.out.json
    ? new (await import('./json-printer.js')).JsonPrinter(io.out)
    : new (await import('./text-printer.js')).TextPrinter(io);
  const emit: ConnectEmit = (event, redraw) => printer.event(event, redraw);
  const { method } = options;
  if (method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(method))
    throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(method)}).`);
  const remoteAgyctl = options.remoteAgyctl.trim();
  if (remoteAgyctl === '')
    throw usageError(
      '--remote-agyctl is empty.',
      'pass the command that runs agyctl on the remote box, e.g. --remote-agyctl ~/.local/bin/agyctl',
    );
  const timeoutMs = parseDurationOption('--timeout', options.timeout);
  const common = {
    sshOptions: (options.sshOption ?? []).map(validateSshOption),
    remoteAgyctl,
    method,
    // The remote agyctl may be older than this one: it gets the value in units every version reads.
    timeout: durationArg(timeoutMs),
    timeoutMs,
    open: options.open,
    sshTimeoutMs: parseDurationOption('--ssh-timeout', options.sshTimeout),
  };
  const destinations = (args[0] as string[] | undefined) ?? [];
  const { inventory, limit } = options;
  if (limit !== undefined && inventory === undefined) throw usageError('--limit needs --inventory.');
  if (inventory !== undefined && destinations.length > 0)
    throw usageError('pass hosts either as arguments or with --inventory, not both.');
  if (inventory === undefined && destinations.length === 0)
    throw usageError(
      'connect needs a destination (or several, or --inventory FILE).',
      'e.g. agyctl connect me@box.example.com',
    );
  if (inventory === undefined && destinations.length === 1)
    return runConnect(io, { ...common, destination: validateDestination(destinations[0]!) }, emit);
  const { readInventory, targetsFromArgs } = await import('../../../connect/inventory.js');
  const { runFleetConnect } = await import('../../../connect/fleet.js');
  const targets =
    inventory === undefined
      ? targetsFromArgs(destinations)
      : await readInventory(path.resolve(io.ctx.cwd, inventory), limit, io.ctx.env);
  return runFleetConnect({ io, targets, options: { ...common, force: options.force === true }, emit });
}
