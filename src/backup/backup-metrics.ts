/**
 * The metrics `backup --prometheus FILE` writes for node_exporter's textfile
 * collector (docs/backup.md), in the same conventions as `check --prometheus`:
 * the exposition writer of src/health/prometheus.ts, temp file + rename in
 * the same directory, mode 0644. A run that fails keeps the last success time
 * from the previous file, so "time since the last good backup" stays true.
 */

import { writeMetricsText } from '../check/metrics-target.js';
import { type MetricFamily, renderExposition } from '../check/prometheus.js';
import { readFileNoFollow } from '../util/os/safe-fs.js';

export interface BackupMetricsInput {
  /** The snapshot was written and no session failed. */
  ok: boolean;
  snapshotted: number;
  reused: number;
  failed: number;
  /** Bytes of the snapshot's databases; undefined when the run stopped before a snapshot. */
  bytes: number | undefined;
  durationMs: number;
  /** ms since the epoch, when the run ended. */
  at: number;
}

const LAST_SUCCESS = 'agyctl_backup_last_success_timestamp_seconds';
const gauge = (name: string, help: string, value: number | undefined): MetricFamily => ({
  name,
  help,
  type: 'gauge',
  samples: value === undefined ? [] : [{ value }],
});

export function backupMetrics(r: BackupMetricsInput, previousSuccess: number | undefined): MetricFamily[] {
  return [
    gauge(
      'agyctl_backup_ok',
      '1 if the last agyctl backup wrote its snapshot with no failed session, else 0.',
      Number(r.ok),
    ),
    gauge(
      'agyctl_backup_last_run_timestamp_seconds',
      'Unix time the last agyctl backup run ended.',
      Math.round(r.at / 1000),
    ),
    gauge(
      LAST_SUCCESS,
      'Unix time of the last agyctl backup run that succeeded (kept across failed runs).',
      r.ok ? Math.round(r.at / 1000) : previousSuccess,
    ),
    gauge(
      'agyctl_backup_sessions_ok',
      'Sessions in the last snapshot (snapshotted or reused).',
      r.snapshotted + r.reused,
    ),
    gauge(
      'agyctl_backup_sessions_reused',
      'Sessions of the last snapshot reused unchanged from the previous one.',
      r.reused,
    ),
    gauge('agyctl_backup_sessions_failed', 'Sessions the last run could not snapshot.', r.failed),
    gauge('agyctl_backup_bytes', 'Bytes of the databases in the last snapshot.', r.bytes),
    gauge('agyctl_backup_duration_seconds', 'Wall time of the last agyctl backup run.', r.durationMs / 1000),
  ];
}

/** The last success time in an existing metrics file, if it has one (read without following a link). */
export function previousSuccess(file: string): number | undefined {
  let text: string;
  try {
    text = readFileNoFollow(file).toString('utf8');
  } catch {
    return undefined;
  }
  const m = new RegExp(`^${LAST_SUCCESS} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

export function writeBackupMetrics(file: string, r: BackupMetricsInput): void {
  writeMetricsText(file, renderExposition(backupMetrics(r, previousSuccess(file))));
}
