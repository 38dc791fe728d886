/** agyctl sessions: every conversation in the state dir, newest first, from the file system and /proc only. */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import { EXIT } from '../../../core/errors.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('sessions')
    .description('list conversations: id, cwd, size of db + WAL, last change, and which process has it open')
    .action(
      action(async (io) => {
        (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'sessions');
        const { listSessionsReport } = await import('../../../backup/sessions.js');
        const { renderSessions } = await import('../backup/render.js');
        const report = await listSessionsReport(io.opts.stateDir);
        if (!io.opts.json) for (const line of renderSessions(report)) io.out.print(line);
        return { exit: EXIT.ok, data: { ...report } };
      }),
    );
}
