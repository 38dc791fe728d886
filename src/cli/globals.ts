/**
 * The options every command takes, and the owner's --timeout of the commands
 * without a deadline of their own: declared only (invoke.ts turns them into
 * GlobalOptions when a command runs), so every start can load this file.
 */
import { type Command, Option } from 'commander';

export function addGlobalOptions(program: Command): Command {
  return program
    .addOption(
      new Option(
        '--profile <name>',
        'server profile: antigravity or gemini-cli (env AGYCTL_PROFILE; default: from the server command, corrected by what the server reports)',
      ),
    )
    .addOption(
      new Option(
        '--state-dir <dir>',
        'server state directory (env AGYCTL_STATE_DIR; default ~/.gemini/antigravity-acp, or ~/.gemini for gemini-cli)',
      ),
    )
    .addOption(
      new Option(
        '--server <cmd>',
        'server command line, split like a shell (env AGYCTL_SERVER; default: the one `agyctl server install` installed, else agy_acp_server, agy_acp_server.par or antigravity-acp on PATH)',
      ),
    )
    .option('--json', 'machine-readable output on stdout (see docs/json.md)')
    .option('--no-color', 'no colour (also NO_COLOR, or when not a TTY)')
    .option('-v, --verbose', 'more detail on stderr')
    .addOption(new Option('--trace <file>', 'write every protocol message (redacted) to FILE as JSONL'));
}

/** The deadline of the owner's side of a command without a deadline of its own (settings, sessions: their --timeout's default). */
const OWNER_DEFAULT_TIMEOUT = '10m';

/** Commands whose --timeout is root's deadline on their owner's side and nothing else, with their subcommands. */
const ownerTimeoutCommands = new WeakSet<Command>();

/**
 * `--timeout <duration>` for a command that has no deadline of its own
 * (settings, sessions): root's deadline on the work done as the state dir's
 * owner (as-owner.ts). On the parent, where commander gives it wherever it
 * stands (`sessions export --timeout 5m` is `sessions`'s).
 */
export function ownerTimeoutOption(command: Command): Command {
  ownerTimeoutCommands.add(command);
  return command.option(
    '--timeout <duration>',
    "as root on another user's state dir: deadline of the work done as that user (then it is stopped, exit 5)",
    OWNER_DEFAULT_TIMEOUT,
  );
}

/** `command` or its nearest ancestor that took ownerTimeoutOption, whose --timeout applies to it. */
export function ownerTimeoutCommand(command: Command | null | undefined): Command | undefined {
  for (let c = command; c; c = c.parent) if (ownerTimeoutCommands.has(c)) return c;
  return undefined;
}

/** The --timeout an ancestor of `command` took with ownerTimeoutOption (it applies here too): for the help. */
export function inheritedOwnerTimeout(command: Command): Option[] {
  return ownerTimeoutCommand(command.parent)?.options.filter((option) => option.long === '--timeout') ?? [];
}
