/** Human lines and --json shapes of `agyctl backup` and its dry run (shapes documented in docs/json.md). */

import type { DryRunReport } from '../../../backup/dry-run.js';
import { type ManifestSession, sessionFiles } from '../../../backup/manifest.js';
import type { BackupReport } from '../../../backup/run-backup.js';
import { formatDuration } from '../../../util/duration.js';
import { sanitizeForTerminal } from '../../../util/terminal-text.js';
import { formatBytes } from './progress.js';

export function backupJson(r: BackupReport): Record<string, unknown> {
  return {
    backupDir: r.backupDir,
    snapshot: r.snapshot,
    sessions: r.sessions.map((s) => ({
      id: s.id,
      cwd: s.cwd,
      status: s.reused ? 'reused' : 'snapshot',
      file: s.file,
      bytes: s.bytes,
      sha256: s.sha256,
      integrity: s.integrity,
      rows: s.rows,
      ...(s.compacted === undefined ? {} : { compacted: s.compacted }),
      brain: s.brain
        ? {
            files: s.brain.files.length,
            bytes: s.brain.files.reduce((n, f) => n + f.bytes, 0),
            reused: s.brain.files.filter((f) => f.reused).length,
            skipped: s.brain.skipped,
          }
        : null,
      ...(s.reusedFrom ? { reusedFrom: s.reusedFrom } : {}),
    })),
    failed: r.failed,
    cleanedUp: r.cleanedUp,
    retention: r.retention,
    elapsedMs: r.elapsedMs,
  };
}

/** A fresh box with no conversations/ yet: nothing written, exit 0 (an hourly timer must not fail until the first conversation). */
export function noConversationsBackup(
  stateDir: string,
  backupDir: string,
): { lines: string[]; json: Record<string, unknown> } {
  return {
    lines: [`no conversations yet in ${stateDir}; nothing to back up`],
    json: {
      backupDir,
      snapshot: null,
      sessions: [],
      failed: [],
      cleanedUp: [],
      retention: null,
      elapsedMs: 0,
      note: 'no-conversations-yet',
    },
  };
}

/** Every line shown on root's terminal from what a user's side may have named: one line, no control characters. */
const shown = (line: string): string => sanitizeForTerminal(line, { singleLine: true });

/** The bytes a session's snapshot holds: database, .meta and brain files. */
const sessionBytes = (s: ManifestSession): number => sessionFiles(s).reduce((n, f) => n + f.bytes, 0);

export function renderBackup(r: BackupReport): string[] {
  const reused = r.sessions.filter((s) => s.reused).length;
  const bytes = r.sessions.reduce((n, s) => n + sessionBytes(s), 0);
  const lines = [
    `snapshot ${r.snapshot.path}`,
    `  ${r.sessions.length + r.failed.length} session(s): ${r.sessions.length - reused} snapshotted, ${reused} reused, ${r.failed.length} failed; ${formatBytes(bytes)} in ${formatDuration(r.elapsedMs)}`,
  ];
  for (const f of r.failed) lines.push(`  failed ${f.id}: ${f.reason}`);
  if (r.cleanedUp.length > 0) lines.push(`  removed leftovers of interrupted runs: ${r.cleanedUp.join(', ')}`);
  if (r.retention?.applied)
    lines.push(
      `retention: kept ${r.retention.kept.length}, removed ${r.retention.removed.length}${r.retention.removed.length > 0 ? ` (${r.retention.removed.join(', ')})` : ''}`,
    );
  if (r.retention && !r.retention.applied) lines.push(`retention skipped: ${r.retention.skippedBecause}`);
  return lines.map(shown);
}

export function renderDryRun(r: DryRunReport): string[] {
  const lines = [
    'dry run: nothing was written or removed',
    ...(r.createsBackupDir ? [`  would create the backup directory ${r.backupDir}`] : []),
    `  would snapshot ${r.sessions.length} session(s) into ${r.backupDir}/${r.wouldCreate}`,
  ];
  if (!r.retention) lines.push('  retention: no --keep-* option, so nothing would be removed');
  else {
    const gone = r.retention.wouldRemove ?? [];
    lines.push(
      `  retention: would keep ${r.retention.kept.length}, would remove ${gone.length}${gone.length > 0 ? ` (${gone.join(', ')})` : ''}`,
    );
  }
  return lines;
}
