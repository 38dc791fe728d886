/** Human lines and --json shapes for backup, its dry run, verify and --prove (shapes documented in docs/json.md). */

import type { DryRunReport } from '../../../backup/dry-run.js';
import type { SnapshotSummary } from '../../../backup/layout.js';
import type { ProveReport } from '../../../backup/replay-proof.js';
import type { BackupReport } from '../../../backup/run-backup.js';
import type { VerifyReport } from '../../../backup/verify.js';
import { formatDuration } from '../../../util/duration.js';
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

export function renderBackup(r: BackupReport): string[] {
  const reused = r.sessions.filter((s) => s.reused).length;
  const bytes = r.sessions.reduce((n, s) => n + s.bytes, 0);
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
  return lines;
}

export function renderVerify(r: VerifyReport): string[] {
  const lines = [`${r.ok ? 'ok' : 'MISMATCH'} ${r.snapshot} (${r.sessions.length} session(s), created ${r.created})`];
  for (const s of r.sessions) {
    if (s.ok) lines.push(`  ok       ${s.id}`);
    else for (const p of s.problems) lines.push(`  BAD      ${s.id}: ${p}`);
  }
  for (const f of r.failedAtBackup)
    lines.push(`  missing  ${f.id}: the backup run could not snapshot it (${f.reason})`);
  if (r.replay?.problem) lines.push(`  BAD      replay.json: ${r.replay.problem}`);
  else if (r.replay?.note) lines.push(`  note     replay.json: ${r.replay.note}`);
  else if (r.replay) lines.push(`  ok       replay.json: a recorded replay of ${r.replay.sessions} session(s)`);
  return lines;
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

export function renderProve(p: ProveReport): string[] {
  const lines = [
    `${p.ok ? 'proved' : 'NOT proved'}: a fresh server loaded ${p.sessions.filter((s) => s.loaded).length}/${p.sessions.length} session(s)${p.scratch ? ' from a scratch copy' : ''}`,
  ];
  for (const s of p.sessions) {
    const counts = `${s.replayed?.user ?? 0} user and ${s.replayed?.agent ?? 0} agent messages`;
    if (!s.ok) lines.push(`  FAILED   ${s.id}: ${s.problem}`);
    else if (s.history === 'empty') lines.push(`  empty    ${s.id}: loaded, replayed no messages (nothing to compare)`);
    else if (s.history === 'identical')
      lines.push(`  ok       ${s.id}: replayed ${counts}, identical to the recorded replay`);
    else lines.push(`  ok       ${s.id}: loaded, replayed ${counts}`);
  }
  for (const note of p.notes) lines.push(`  ${note}`);
  if (p.replay.written)
    lines.push(`  replay recorded in ${p.replay.written.file} (${p.replay.written.sessions} session(s))`);
  return lines;
}

/** `backup list`: one line per snapshot, newest first, then where they are. */
export function renderList(backupDir: string, snapshots: readonly SnapshotSummary[]): string[] {
  if (snapshots.length === 0) return [`no snapshots in ${backupDir} (make one with \`agyctl backup\`)`];
  const lines = [`${'SNAPSHOT'.padEnd(26)}  ${'SESSIONS'.padStart(8)}  ${'SIZE'.padStart(9)}  NOTES`];
  for (const s of snapshots) {
    const notes = [
      s.problem ? `manifest unreadable (agyctl backup verify ${s.name})` : '',
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
