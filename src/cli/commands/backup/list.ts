/** `agyctl backup list [--from DIR]`. */

import type { SnapshotSummary } from '../../../backup/layout.js';
import { EXIT } from '../../../core/errors.js';
import { withFsErrors } from '../../../util/fs-errors.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import type { ListFlags } from './flags.js';
import { dirOption, fsContext } from './handler.js';
import { formatBytes } from './progress.js';

/** `backup list`: the complete snapshots of a backup directory, newest first; none (or no directory yet) is not an error. */
export function listCommand(io: HandlerIO, flags: ListFlags): Promise<CommandResult> {
  const backupDir = dirOption(io, flags.from);
  return withFsErrors(fsContext(io, backupDir, '--from'), async () => {
    const { summarizeSnapshots } = await import('../../../backup/layout.js');
    const { refuseArchiveAsBackupDir } = await import('../../../backup/resolve-snapshot.js');
    refuseArchiveAsBackupDir(backupDir, false);
    const snapshots = summarizeSnapshots(backupDir);
    if (!io.opts.json) for (const line of renderList(backupDir, snapshots)) io.out.print(line);
    return { exit: EXIT.ok, data: { backupDir, snapshots } };
  });
}

/** `backup list`: one line per snapshot, newest first, then where they are. */
export function renderList(backupDir: string, snapshots: readonly SnapshotSummary[]): string[] {
  if (snapshots.length === 0) return [`no snapshots in ${backupDir} (make one with \`agyctl backup\`)`];
  const lines = [`${'SNAPSHOT'.padEnd(26)}  ${'SESSIONS'.padStart(8)}  ${'SIZE'.padStart(9)}  NOTES`];
  for (const s of snapshots) {
    const notes = [
      s.problem ? problemNote(s) : '',
      s.failed ? `${s.failed} session(s) failed` : '',
      s.proven ? 'proven (replay.json)' : '',
    ].filter(Boolean);
    lines.push(
      `${s.name.padEnd(26)}  ${String(s.sessions ?? '?').padStart(8)}  ${(s.bytes === null ? '?' : formatBytes(s.bytes)).padStart(9)}  ${notes.join('; ')}`.trimEnd(),
    );
  }
  lines.push(`${snapshots.length} snapshot(s) in ${backupDir}`);
  return lines;
}

/** What the NOTES column says of a manifest that cannot be read: the fix, as restore and verify would give it. */
function problemNote(s: SnapshotSummary): string {
  if (s.problemKind === 'newer') return 'written by a newer agyctl: use a newer agyctl to read this snapshot';
  if (s.problemKind === 'unreadable') return 'manifest unreadable: fix the permissions, or run as its owner';
  return `manifest damaged or foreign (agyctl backup verify ${s.name})`;
}
