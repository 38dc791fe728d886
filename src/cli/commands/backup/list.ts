/** `agyctl backup list [--from DIR]`. */
import { EXIT } from '../../../core/errors.js';
import { withFsErrors } from '../../../util/fs-errors.js';
import type { CommandResult, HandlerIO } from '../../context.js';
import { dirOption, fsContext } from './handler.js';
import { renderList } from './render.js';

/** `backup list`: the complete snapshots of a backup directory, newest first; none (or no directory yet) is not an error. */
export function listCommand(io: HandlerIO, flags: { from?: string }): Promise<CommandResult> {
  const backupDir = dirOption(io, flags.from);
  return withFsErrors(fsContext(io, backupDir, '--from'), async () => {
    const { summarizeSnapshots } = await import('../../../backup/layout.js');
    const snapshots = summarizeSnapshots(backupDir);
    if (!io.opts.json) for (const line of renderList(backupDir, snapshots)) io.out.print(line);
    return { exit: EXIT.ok, data: { backupDir, snapshots } };
  });
}
