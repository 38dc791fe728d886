// backup --prometheus: valid exposition text, atomic writes, and a failed run
// keeps the previous last-success time.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeBackupMetrics } from '../../src/backup/backup-metrics.js';
import { parseExposition } from '../helpers/exposition.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-bkmetrics-');
const value = (text: string, name: string): number | undefined => parseExposition(text).get(name)?.samples[0]?.value;

describe('backup metrics', () => {
  it('writes every agyctl_backup_* family as valid exposition text, mode 0644, no temp file left', () => {
    const dir = tmp();
    const file = path.join(dir, 'agyctl-backup.prom');
    writeBackupMetrics(file, {
      ok: true,
      snapshotted: 3,
      reused: 2,
      failed: 0,
      bytes: 12345,
      durationMs: 1500,
      at: 1_800_000_000_000,
    });
    const text = fs.readFileSync(file, 'utf8');
    const families = parseExposition(text);
    expect([...families.keys()]).toEqual([
      'agyctl_backup_ok',
      'agyctl_backup_last_run_timestamp_seconds',
      'agyctl_backup_last_success_timestamp_seconds',
      'agyctl_backup_sessions_ok',
      'agyctl_backup_sessions_reused',
      'agyctl_backup_sessions_failed',
      'agyctl_backup_bytes',
      'agyctl_backup_duration_seconds',
    ]);
    for (const f of families.values()) expect(f.type).toBe('gauge');
    expect(value(text, 'agyctl_backup_ok')).toBe(1);
    expect(value(text, 'agyctl_backup_sessions_ok')).toBe(5);
    expect(value(text, 'agyctl_backup_bytes')).toBe(12345);
    expect(value(text, 'agyctl_backup_duration_seconds')).toBe(1.5);
    expect(value(text, 'agyctl_backup_last_success_timestamp_seconds')).toBe(1_800_000_000);
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(dir)).toEqual(['agyctl-backup.prom']);
  });

  it('a failed run reports ok 0 and keeps the last success time of the previous file', () => {
    const file = path.join(tmp(), 'agyctl-backup.prom');
    writeBackupMetrics(file, {
      ok: true,
      snapshotted: 1,
      reused: 0,
      failed: 0,
      bytes: 10,
      durationMs: 10,
      at: 1_800_000_000_000,
    });
    writeBackupMetrics(file, {
      ok: false,
      snapshotted: 0,
      reused: 0,
      failed: 2,
      bytes: undefined,
      durationMs: 10,
      at: 1_800_000_600_000,
    });
    const text = fs.readFileSync(file, 'utf8');
    expect(value(text, 'agyctl_backup_ok')).toBe(0);
    expect(value(text, 'agyctl_backup_sessions_failed')).toBe(2);
    expect(value(text, 'agyctl_backup_last_run_timestamp_seconds')).toBe(1_800_000_600);
    expect(value(text, 'agyctl_backup_last_success_timestamp_seconds')).toBe(1_800_000_000);
    expect(parseExposition(text).has('agyctl_backup_bytes')).toBe(false);
  });
});
