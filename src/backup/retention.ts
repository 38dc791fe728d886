/**
 * Which snapshots to keep, like restic's `forget`: --keep-last N keeps the N
 * newest; --keep-daily N keeps the newest snapshot of each of the N newest
 * days that have one; --keep-weekly N the same per ISO week. A snapshot kept
 * by any rule stays. Days and weeks are UTC, like the snapshot names.
 */
import type { SnapshotRef } from './layout.js';

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

/** `snapshots` are complete ones; `protect` (the run's new snapshot) is kept whatever the policy says. */
export function planRetention(snapshots: SnapshotRef[], policy: RetentionPolicy, protect?: string): RetentionPlan {
  const sorted = [...snapshots].sort((a, b) => b.created.getTime() - a.created.getTime() || b.name.localeCompare(a.name));
  const reasons = new Map<string, string[]>(sorted.map((s) => [s.name, []]));
  const add = (name: string, why: string): void => void reasons.get(name)!.push(why);
  sorted.slice(0, policy.keepLast ?? 0).forEach((s) => add(s.name, 'last'));
  newestPerBucket(sorted, dayKey, policy.keepDaily ?? 0).forEach((s) => add(s.name, 'daily'));
  newestPerBucket(sorted, weekKey, policy.keepWeekly ?? 0).forEach((s) => add(s.name, 'weekly'));
  if (protect !== undefined && reasons.has(protect) && reasons.get(protect)!.length === 0) add(protect, 'new');
  return {
    keep: sorted.filter((s) => reasons.get(s.name)!.length > 0).map((s) => ({ name: s.name, reasons: reasons.get(s.name)! })),
    remove: sorted.filter((s) => reasons.get(s.name)!.length === 0),
  };
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
