/** `agyctl sessions`: backup/discover.ts lists, render.ts prints. */

import { EXIT } from '../../../core/errors.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';

/** `sessions` has no options of its own (globals are in io.opts). */
export type SessionsFlags = Record<string, never>;

export async function sessionsCommand(io: HandlerIO, _input: HandlerArgs<SessionsFlags>): Promise<CommandResult> {
  (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'sessions');
  const { listSessionsReport } = await import('../../../backup/discover.js');
  const { renderSessions } = await import('./render.js');
  const report = listSessionsReport(io.opts.stateDir);
  if (!io.opts.json) for (const line of renderSessions(report)) io.out.print(line);
  return { exit: EXIT.ok, data: { ...report } };
}
