/** `agyctl sessions`: src/backup/sessions.ts, printed by backup's render.ts. */

import { EXIT } from '../../../core/errors.js';
import type { HandlerArgs } from '../../action.js';
import type { CommandIO, CommandResult } from '../../context.js';

export async function sessionsCommand(io: CommandIO, _input: HandlerArgs): Promise<CommandResult> {
  (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'sessions');
  const { listSessionsReport } = await import('../../../backup/sessions.js');
  const { renderSessions } = await import('../backup/render.js');
  const report = await listSessionsReport(io.opts.stateDir);
  if (!io.opts.json) for (const line of renderSessions(report)) io.out.print(line);
  return { exit: EXIT.ok, data: { ...report } };
}
