/**
 * Applying the retention policy after a run. Only complete snapshots are
 * candidates, and only once the new one is complete. A run where some
 * session failed prunes nothing: its snapshot lacks those sessions, and
 * older snapshots may be the only copies of them.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Output } from '../cli/output.js';
import { errorText } from './files.js';
import { deletingName, listSnapshots } from './layout.js';
import { hasPolicy, planRetention, type RetentionPolicy } from './retention.js';
import { fsyncDir } from '../util/atomic-write.js';

export interface RetentionResult {
  applied: boolean;
  skippedBecause?: string;
  kept: Array<{ name: string; reasons: string[] }>;
  removed: string[];
}

export function applyRetention(backupDir: string, policy: RetentionPolicy, newest: string, failures: number, out: Output): RetentionResult | null {
  if (!hasPolicy(policy)) return null;
  if (failures > 0) {
    const why = `${failures} session(s) failed in this run`;
    out.warn(`retention skipped: ${why}; no snapshot was deleted`);
    return { applied: false, skippedBecause: why, kept: [], removed: [] };
  }
  const plan = planRetention(listSnapshots(backupDir), policy, newest);
  const removed: string[] = [];
  for (const snap of plan.remove) {
    // Rename first: a run killed mid-delete leaves a `.deleting` leftover, never a half snapshot that looks whole.
    const doomed = path.join(backupDir, deletingName(snap.name));
    try {
      fs.renameSync(snap.dir, doomed);
      fsyncDir(backupDir);
      fs.rmSync(doomed, { recursive: true, force: true });
      removed.push(snap.name);
    } catch (err) {
      out.warn(`could not remove snapshot ${snap.name}: ${errorText(err)}`);
    }
  }
  return { applied: true, kept: plan.keep, removed };
}
