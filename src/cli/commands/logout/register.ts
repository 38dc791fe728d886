/** agyctl logout: remove this box's credentials and confirm that a fresh server refuses them. */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import { EXIT } from '../../../core/errors.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('logout')
    .description("log the server out (its own logout when advertised, else remove acp_token.json), then confirm a fresh server refuses")
    .option('--local', 'remove the token file without asking the server')
    .option('--timeout <duration>', 'deadline for each server start and call', '60s')
    .action(
      action(async (io, { options }) => {
        const { parseDurationOption } = await import('../../parse-options.js');
        const { runLogout } = await import('../../../login/logout.js');
        const report = await runLogout(io, { local: Boolean(options.local), timeoutMs: parseDurationOption('--timeout', String(options.timeout)) });
        if (report.confirmed) io.out.print(`Logged out (${report.via}); a fresh server now refuses: ${report.serverSaid ?? 'authentication required'}`);
        else {
          io.out.print('Credentials still work: a fresh server accepted a new session.');
          io.out.info('hint: an API key (GEMINI_API_KEY / GOOGLE_API_KEY) or Application Default Credentials in the server environment may still authenticate it; see agyctl settings show');
        }
        return { exit: report.confirmed ? EXIT.ok : EXIT.findings, data: { logout: report } };
      }),
    );
}
