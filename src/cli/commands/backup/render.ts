/** Human lines and --json shapes for sessions, backup, verify and restore (shapes documented in docs/json.md). */

import { formatBytes } from '../../../backup/progress.js';
import type { RestoreReport } from '../../../backup/restore.js';
import type { BackupReport } from '../../../backup/run-backup.js';
import type { SessionsReport } from '../../../backup/sessions.js';
import type { VerifyReport } from '../../../backup/verify.js';
import { formatDuration } from '../../../util/duration.js';

export function renderSessions(report: SessionsReport): string[] {
  if (report.sessions.length === 0) return [`no conversations yet in ${report.stateDir}`];
  const lines = [row('ID', 'SIZE', 'MODIFIED', 'OPEN BY', 'CWD')];
  for (const s of report.sessions) {
    const modified = s.modified ? s.modified.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-';
    lines.push(row(s.id, formatBytes(s.bytes), modified, s.openBy.length > 0 ? s.openBy.join(',') : '-', s.cwd ?? '?'));
    if (s.problem) lines.push(`    problem: ${s.problem}`);
  }
  return lines;
}

function row(id: string, size: string, modified: string, openBy: string, cwd: string): string {
  return `${id.padEnd(36)}  ${size.padStart(8)}  ${modified.padEnd(20)}  ${openBy.padEnd(8)}  ${cwd}`;
}

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

export function renderRestore(r: RestoreReport): string[] {
  const lines: string[] = [];
  for (const s of r.sessions) {
    if (s.restored) lines.push(`restored ${s.id}${s.preRestore ? ` (previous database kept as ${s.preRestore})` : ''}`);
    else lines.push(`NOT restored ${s.id}: ${s.reason}`);
  }
  if (r.sessions.length === 0) lines.push(`nothing to restore in ${r.snapshot}`);
  return lines;
}
