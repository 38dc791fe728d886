/** `agyctl logout`: flags -> src/login/logout.ts, and what it found for a person. */

import path from 'node:path';
import { EXIT } from '../../../core/errors.js';
import type { HandlerArgs } from '../../action.js';
import type { CommandResult, HandlerIO } from '../../context.js';

/** `agyctl logout`'s own flags, as commander produces them. */
export interface LogoutFlags {
  local: boolean | undefined;
  timeout: string;
}

export async function logoutCommand(io: HandlerIO, { options }: HandlerArgs<LogoutFlags>): Promise<CommandResult> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const { runLogout } = await import('../../../login/logout.js');
  const report = await runLogout(io, {
    local: options.local === true,
    timeoutMs: parseDurationOption('--timeout', options.timeout),
  });
  const refuses = `a fresh server refuses: ${report.serverSaid ?? 'authentication required'}`;
  if (report.confirmed && report.alreadyLoggedOut)
    io.out.print(`Already logged out: there was no ${path.basename(report.tokenFile)}; ${refuses}`);
  else if (report.confirmed) io.out.print(`Logged out (${report.via}); ${refuses.replace('refuses', 'now refuses')}`);
  else {
    io.out.print('Credentials still work: a fresh server accepted a new session.');
    io.out.info(
      'hint: an API key (GEMINI_API_KEY / GOOGLE_API_KEY) or Application Default Credentials in the server environment may still authenticate it; see agyctl settings show',
    );
  }
  return { exit: report.confirmed ? EXIT.ok : EXIT.findings, data: { logout: report } };
}
