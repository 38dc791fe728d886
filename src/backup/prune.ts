/**
 * Applying the retention policy after a run, per session (retention.ts).
 * Only complete snapshots are candidates, and only once the new one is
 * complete. A run where some session failed prunes nothing: its snapshot
 * lacks those sessions, and older snapshots may be the only copies of them.
 * `backup --dry-run` plans the same way and removes nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Reporter } from '../core/reporter.js';
import { fsyncDir } from '../util/atomic-write.js';
import { errorText } from './files.js';
import { deletingName, listSnapshots, type SnapshotRef } from './layout.js';
import { readManifest } from './manifest.js';
import {
  hasPolicy,
  planSessionRetention,
  type RetentionPlan,
  type RetentionPolicy,
  type SnapshotContents,
} from './retention.js';

export interface RetentionResult {
  applied: boolean;
  skippedBecause?: string;
  kept: Array<{ name: string; reasons: string[] }>;
  removed: string[];
  /** Only for `backup --dry-run`: what a real run would remove (nothing was). */
  dryRun?: boolean;
  wouldRemove?: string[];
}

/** Every complete snapshot with the sessions its manifest lists (null: unreadable, so kept). */
export function snapshotContents(backupDir: string): SnapshotContents[] {
  return listSnapshots(backupDir).map((snap) => ({ ...snap, sessions: sessionsOf(snap) }));
}

function sessionsOf(snap: SnapshotRef): string[] | null {
  try {
    return readManifest(snap.dir).sessions.map((s) => s.id);
  } catch {
    return null;
  }
}

/** The plan for the snapshots as they are, plus (for a dry run) the snapshot this run would add. */
export function planPrune(
  backupDir: string,
  policy: RetentionPolicy,
  newest: string,
  planned?: SnapshotContents,
): RetentionPlan {
  const all = snapshotContents(backupDir);
  return planSessionRetention(planned ? [...all, planned] : all, policy, newest);
}

export function applyRetention(
  backupDir: string,
  policy: RetentionPolicy,
  newest: string,
  failures: number,
  out: Reporter,
): RetentionResult | null {
  if (!hasPolicy(policy)) return null;
  if (failures > 0) {
    const why = `${failures} session(s) failed in this run`;
    out.warn(`retention skipped: ${why}; no snapshot was deleted`);
    return { applied: false, skippedBecause: why, kept: [], removed: [] };
  }
  const plan = planPrune(backupDir, policy, newest);
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

/** `backup --dry-run`: the plan for a run now, as if every selected session were snapshotted; nothing is written or removed. */
export function dryRunRetention(
  backupDir: string,
  policy: RetentionPolicy,
  planned: SnapshotContents,
): RetentionResult | null {
  if (!hasPolicy(policy)) return null;
  const plan = planPrune(backupDir, policy, planned.name, planned);
  return { applied: false, dryRun: true, kept: plan.keep, removed: [], wouldRemove: plan.remove.map((s) => s.name) };
}
