/** `agyctl logout`: flags -> src/login/logout.ts, and what it found for a person. */

import path from 'node:path';
import { EXIT } from '../../../core/errors.js';
import type { LogoutStep } from '../../../login/logout.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';

/** What a logout says as it goes: notes on stderr, the same with --json (its document is the report). */
const logoutPrinter =
  (out: HandlerIO['out']) =>
  (step: LogoutStep): void => {
    if (step.step === 'no-token-file') out.info(`${step.file} does not exist; nothing to remove locally`);
    else if (step.step === 'removing-token')
      out.info(`Removing ${step.file} (this box's stored Google credentials; contents not shown).`);
    else if (step.step === 'server-has-no-logout')
      out.info('This server does not advertise logout; removing the token file instead.');
    // With no token file there was nothing to log out: the result line says "Already logged out".
    else if (step.hadToken) out.info('The server logged out.');
  };

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
    show: logoutPrinter(io.out),
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
