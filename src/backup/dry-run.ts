/**
 * `backup --dry-run`, like restic's `forget --dry-run`: what a run now would
 * back up and what retention would then remove, with nothing written,
 * locked or removed. The plan assumes every selected readable session is
 * snapshotted; a real run in which a session fails removes nothing at all.
 */
import fs from 'node:fs';
import { usageError } from '../core/errors.js';
import { discoverSessions, noConversationsDirectory } from './discover.js';
import { freshName, snapshotName } from './layout.js';
import { dryRunRetention, type RetentionResult } from './retention.js';
import type { BackupOptions } from './run-backup.js';

export interface DryRunReport {
  dryRun: true;
  backupDir: string;
  /** The backup directory does not exist yet: a run would create it. */
  createsBackupDir: boolean;
  /** The snapshot a run now would write (not written). */
  wouldCreate: string;
  /** Sessions a run now would back up. */
  sessions: string[];
  retention: RetentionResult | null;
}

/** The sessions a run now would back up (read where the run reads: as the state dir's owner when root is on a user's state dir). */
export function plannedSessions(stateDir: string, sessionIds: string[]): string[] {
  const all = discoverSessions(stateDir);
  if (all === undefined) throw noConversationsDirectory(stateDir);
  const wanted = [...new Set(sessionIds)];
  const missing = wanted.filter((id) => !all.some((s) => s.id === id));
  if (missing.length > 0)
    throw usageError(`No conversation ${missing.join(', ')} in ${stateDir}.`, 'run `agyctl sessions` to list the ids');
  return all.filter((s) => s.readable && (wanted.length === 0 || wanted.includes(s.id))).map((s) => s.id);
}

/** `sessions`: the plan's sessions when they were read elsewhere (the owner's side); otherwise read here. */
export function dryRunBackup(
  options: BackupOptions,
  sessions = plannedSessions(options.stateDir, options.sessionIds),
): DryRunReport {
  const { backupDir } = options;
  const created = new Date();
  const createsBackupDir = !fs.existsSync(backupDir);
  const name = createsBackupDir ? snapshotName(created) : freshName(backupDir, created);
  const retention = dryRunRetention(options, { name, dir: '', created, sessions });
  return { dryRun: true, backupDir, createsBackupDir, wouldCreate: name, sessions, retention };
}
