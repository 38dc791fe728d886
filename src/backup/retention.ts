/**
 * Which snapshots to keep, like restic's `forget`, and removing the others.
 * --keep-last N keeps the N newest; --keep-daily N keeps the newest
 * snapshot of each of the N newest days that have one; --keep-weekly N the
 * same per ISO week. A snapshot kept by any rule stays. Days and weeks are
 * UTC, like the snapshot names.
 *
 * Per session (planSessionRetention): the rules count, for each session, the
 * snapshots that hold it, so a snapshot goes only when every session in it
 * keeps enough newer copies. `backup --session A` snapshots never push out
 * the only copy of B, and snapshots with no sessions never push out ones
 * with data (they are judged by the rules among all snapshots, and count as
 * a copy of nothing).
 *
 * Applying the policy after a run (applyRetention): only complete snapshots
 * are candidates, and only once the new one is complete. A run where some
 * session failed prunes nothing: its snapshot lacks those sessions, and
 * older snapshots may be the only copies of them. `backup --dry-run` plans
 * the same way and removes nothing (dryRunRetention).
 */

import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir } from '../util/os/atomic-write.js';
import { errorText } from './error-text.js';
import type { RetentionEvent } from './events.js';
import { deletingName, listSnapshots, type SnapshotRef } from './layout.js';
import { type Manifest, readManifest } from './manifest.js';
import { matchSource, type SnapshotSource, sourceOf } from './source.js';

export interface RetentionPolicy {
  keepLast?: number | undefined;
  keepDaily?: number | undefined;
  keepWeekly?: number | undefined;
}

export interface RetentionPlan {
  keep: Array<{ name: string; reasons: string[] }>;
  remove: SnapshotRef[];
}

export function hasPolicy(p: RetentionPolicy): boolean {
  return p.keepLast !== undefined || p.keepDaily !== undefined || p.keepWeekly !== undefined;
}

/** A complete snapshot and the session ids its manifest lists; null when the manifest cannot be read. */
export interface SnapshotContents extends SnapshotRef {
  sessions: readonly string[] | null;
}

type Reasons = Map<string, string[]>;

/** Why a snapshot stays: a rule, the run's own snapshot, or a manifest nobody can read. */
const REASON_ORDER = ['last', 'daily', 'weekly', 'new', 'unreadable-manifest'];

const newestFirst = <T extends SnapshotRef>(list: readonly T[]): T[] =>
  [...list].sort((a, b) => b.created.getTime() - a.created.getTime() || b.name.localeCompare(a.name));

/** Mark what the three rules keep among `candidates` (newest first). */
function applyRules(
  candidates: SnapshotRef[],
  policy: RetentionPolicy,
  add: (name: string, why: string) => void,
): void {
  for (const s of candidates.slice(0, policy.keepLast ?? 0)) add(s.name, 'last');
  for (const s of newestPerBucket(candidates, dayKey, policy.keepDaily ?? 0)) add(s.name, 'daily');
  for (const s of newestPerBucket(candidates, weekKey, policy.keepWeekly ?? 0)) add(s.name, 'weekly');
}

function toPlan(sorted: SnapshotRef[], reasons: Reasons, protect: string | undefined): RetentionPlan {
  if (protect !== undefined && reasons.has(protect) && reasons.get(protect)!.length === 0)
    reasons.get(protect)!.push('new');
  return {
    keep: sorted
      .filter((s) => reasons.get(s.name)!.length > 0)
      .map((s) => ({ name: s.name, reasons: reasons.get(s.name)! })),
    remove: sorted.filter((s) => reasons.get(s.name)!.length === 0),
  };
}

/** The rules over all snapshots alike. `snapshots` are complete ones; `protect` (the run's new snapshot) is kept whatever the policy says. */
export function planRetention(snapshots: SnapshotRef[], policy: RetentionPolicy, protect?: string): RetentionPlan {
  const sorted = newestFirst(snapshots);
  const reasons: Reasons = new Map(sorted.map((s) => [s.name, []]));
  applyRules(sorted, policy, (name, why) => void reasons.get(name)!.push(why));
  return toPlan(sorted, reasons, protect);
}

/**
 * The rules per session (see the header). A snapshot whose manifest cannot
 * be read is kept: nobody can tell whose only copy it holds.
 */
export function planSessionRetention(
  snapshots: SnapshotContents[],
  policy: RetentionPolicy,
  protect?: string,
): RetentionPlan {
  const sorted = newestFirst(snapshots);
  const reasons: Reasons = new Map(sorted.map((s) => [s.name, []]));
  const add = (name: string, why: string): void => {
    const list = reasons.get(name)!;
    if (!list.includes(why)) list.push(why);
  };
  const holding = new Map<string, SnapshotContents[]>();
  for (const snap of sorted) {
    if (snap.sessions === null) add(snap.name, 'unreadable-manifest');
    for (const id of new Set(snap.sessions ?? [])) holding.set(id, [...(holding.get(id) ?? []), snap]);
  }
  for (const copies of holding.values()) applyRules(copies, policy, add);
  // Empty snapshots: kept only where the rules over all snapshots would keep them; they hold no copy of anything.
  const global = new Map(planRetention(sorted, policy).keep.map((k) => [k.name, k.reasons]));
  for (const snap of sorted)
    if (snap.sessions !== null && snap.sessions.length === 0)
      for (const why of global.get(snap.name) ?? []) add(snap.name, why);
  for (const list of reasons.values()) list.sort((a, b) => REASON_ORDER.indexOf(a) - REASON_ORDER.indexOf(b));
  return toPlan(sorted, reasons, protect);
}

function newestPerBucket(sorted: SnapshotRef[], key: (d: Date) => string, n: number): SnapshotRef[] {
  const picked: SnapshotRef[] = [];
  const seen = new Set<string>();
  for (const s of sorted) {
    if (picked.length >= n) break;
    const k = key(s.created);
    if (seen.has(k)) continue;
    seen.add(k);
    picked.push(s);
  }
  return picked;
}

export function dayKey(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** ISO 8601 week: weeks start on Monday; week 1 holds the year's first Thursday. */
export function weekKey(d: Date): string {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const weekday = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - weekday); // the Thursday of this week decides the year
  const yearStart = Date.UTC(t.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${t.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

export interface RetentionResult {
  applied: boolean;
  skippedBecause?: string;
  kept: Array<{ name: string; reasons: string[] }>;
  removed: string[];
  /** Only for `backup --dry-run`: what a real run would remove (nothing was). */
  dryRun?: boolean;
  wouldRemove?: string[];
}

/**
 * Every complete snapshot of `source` with the sessions its manifest lists.
 * Another state dir's snapshots in the same directory are not this run's to
 * keep or remove; nor is one whose manifest cannot be read (whose it is is unknown).
 */
export function snapshotContents(backupDir: string, source: SnapshotSource): SnapshotContents[] {
  const out: SnapshotContents[] = [];
  for (const snap of listSnapshots(backupDir)) {
    const m = manifestOf(snap);
    if (m && matchSource(m, source) !== 'other') out.push({ ...snap, sessions: m.sessions.map((s) => s.id) });
  }
  return out;
}

function manifestOf(snap: SnapshotRef): Manifest | null {
  try {
    return readManifest(snap.dir);
  } catch {
    return null;
  }
}

/**
 * What retention reads of a run's options (BackupOptions extends it): the
 * backup directory (--to), the state dir whose snapshots it thins there, and the policy (--keep-*).
 */
export interface RetentionOptions {
  stateDir: string;
  backupDir: string;
  retention: RetentionPolicy;
}

/** The plan for the snapshots as they are, plus (for a dry run) the snapshot this run would add. */
function planPrune(options: RetentionOptions, newest: string, planned?: SnapshotContents): RetentionPlan {
  const all = snapshotContents(options.backupDir, sourceOf(options.stateDir));
  return planSessionRetention(planned ? [...all, planned] : all, options.retention, newest);
}

/** After a run: its options, the snapshot it just wrote (`newest`) and how many sessions failed in it. */
export function applyRetention(
  options: RetentionOptions,
  newest: string,
  failures: number,
  emit: (event: RetentionEvent) => void,
): RetentionResult | null {
  const { backupDir, retention: policy } = options;
  if (!hasPolicy(policy)) return null;
  if (failures > 0) {
    const why = `${failures} session(s) failed in this run`;
    emit({ type: 'retention-skipped', why });
    return { applied: false, skippedBecause: why, kept: [], removed: [] };
  }
  const plan = planPrune(options, newest);
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
      emit({ type: 'snapshot-not-removed', snapshot: snap.name, error: errorText(err) });
    }
  }
  return { applied: true, kept: plan.keep, removed };
}

/** `backup --dry-run`: the plan for a run now, as if every selected session were snapshotted; nothing is written or removed. */
export function dryRunRetention(options: RetentionOptions, planned: SnapshotContents): RetentionResult | null {
  if (!hasPolicy(options.retention)) return null;
  const plan = planPrune(options, planned.name, planned);
  return { applied: false, dryRun: true, kept: plan.keep, removed: [], wouldRemove: plan.remove.map((s) => s.name) };
}
