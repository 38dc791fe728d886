/** agyctl server install|list|use|remove|prune|status: the server itself, installed from its published archive (docs/server.md). */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import type { InstallFlags, PrefixFlags, ProveFlags, PruneFlags } from './handler.js';

const PREFIX_HELP =
  'where servers are installed (default: root /opt/agyctl/servers; a user $XDG_DATA_HOME/agyctl/servers or ~/.local/share/agyctl/servers)';

export function register(program: Command, action: ActionFactory): void {
  const server = program
    .command('server')
    .description(
      'install, switch and remove versions of the server from its published archive, proven and rolled back',
    );
  const handler = () => import('./handler.js');
  server
    .command('install')
    .description(
      'verify ARCHIVE (zip or tar.gz) against its sha256, unpack it into a versioned directory, switch to it, prove it; rolled back when the proof fails',
    )
    .argument('<archive>', 'the archive as published (a local file)')
    .option('--sha256 <hex>', "the archive's published sha256")
    .option('--sums <file>', 'a SHA256SUMS-style file that lists the archive (instead of --sha256)')
    .option('--version <v>', "the version (default: from the archive's name, …-<version>-linux-…, else --agent-json)")
    .option('--agent-json <file>', "the ACP registry's agent.json: the command, args and version")
    .option('--prefix <dir>', PREFIX_HELP)
    .option('--no-prove', 'do not start the new server (initialize, check --live) after switching')
    .option('--force', 'install even while a `login --detach` is pending')
    .option('--timeout <duration>', 'deadline of each proof step', '60s')
    .action(action<InstallFlags>(async (io, input) => (await handler()).installCommand(io, input)));
  server
    .command('list')
    .description('the installed versions: which is current, size, sha256, installed when')
    .option('--prefix <dir>', PREFIX_HELP)
    .action(action<PrefixFlags>(async (io, input) => (await handler()).listCommand(io, input)));
  server
    .command('use')
    .description('switch to an installed VERSION and prove it; switched back when the proof fails')
    .argument('<version>', 'an installed version')
    .option('--prefix <dir>', PREFIX_HELP)
    .option('--no-prove', 'do not start the server after switching')
    .option('--timeout <duration>', 'deadline of each proof step', '60s')
    .action(action<ProveFlags>(async (io, input) => (await handler()).useCommand(io, input)));
  server
    .command('remove')
    .description('remove an installed VERSION (never the current one)')
    .argument('<version>', 'an installed version')
    .option('--prefix <dir>', PREFIX_HELP)
    .action(action<PrefixFlags>(async (io, input) => (await handler()).removeCommand(io, input)));
  server
    .command('prune')
    .description('keep N versions, the current one counted, the newest others; remove the rest')
    .requiredOption('--keep <n>', 'how many versions to keep (at least 1)')
    .option('--prefix <dir>', PREFIX_HELP)
    .action(action<PruneFlags>(async (io, input) => (await handler()).pruneCommand(io, input)));
  server
    .command('status')
    .description(
      'the current version beside the version the server reports (agentInfo.version); exit 6 when it names another',
    )
    .option('--prefix <dir>', PREFIX_HELP)
    .option('--timeout <duration>', 'deadline for the server to answer initialize', '60s')
    .action(action<ProveFlags>(async (io, input) => (await handler()).statusCommand(io, input)));
}
