/** agyctl probe: start the server, initialize, report what it is and how fast it came up, stop it. */
import type { Command } from 'commander';
import type { ActionFactory } from '../action.js';
import { EXIT } from '../../errors.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('probe')
    .description('start the server, run initialize, print its build, auth methods, capabilities and start-up time')
    .option('--timeout <duration>', 'deadline for the server to answer initialize', '60s')
    .action(
      action(async (io, { options }) => {
        const { runProbe } = await import('../../acp/probe.js');
        const { parseDurationOption } = await import('../parse-options.js');
        const report = await runProbe(io, parseDurationOption('--timeout', options.timeout as string));
        if (!io.opts.json) {
          const { renderProbe } = await import('../../acp/probe.js');
          for (const line of renderProbe(report)) io.out.print(line);
        }
        return { exit: EXIT.ok, data: { probe: report } };
      }),
    );
}
