/** agyctl check: are the credentials healthy, for a person and for CI (docs/check.md). */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import type { CheckFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('check')
    .description('check settings and credentials (static); --live, --restart and --prompt also start the server')
    .option('--live', 'also start the server and open a session without authenticate')
    .option('--restart', 'also check that a fresh server loads that session without a new login (implies --live)')
    .option('--prompt', 'also send one tiny prompt and expect an answer (costs a model call; implies --live)')
    .option('--model <id>', 'model to set and re-apply across the restart (default: the model the first server had)')
    .option('--timeout <duration>', 'deadline for the whole check', '60s')
    .option('--prometheus <file>', 'also write node_exporter textfile-collector metrics to FILE, atomically')
    .action(
      action<CheckFlags>(
        async (io, { options }) => {
          const { checkOptions, runCheckCommand } = await import('./handler.js');
          return runCheckCommand(io, checkOptions(io, options));
        },
        {
          readsStateDir: true,
          // Root on a user's state dir writes the metrics file itself, from the text the owner's child sends.
          asOwner: async ({ options }, ctx) => ({
            prometheus: (await import('../../../check/metrics-target.js')).callersMetricsFile(
              options.prometheus,
              ctx.cwd,
              ctx.env,
            ),
          }),
        },
      ),
    );
}
