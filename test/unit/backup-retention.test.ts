import { describe, expect, it } from 'vitest';
import { parseSnapshotName, type SnapshotRef, snapshotName } from '../../src/backup/layout.js';
import { planRetention, planSessionRetention, type SnapshotContents, weekKey } from '../../src/backup/retention.js';

function snaps(...isos: string[]): SnapshotRef[] {
  return isos.map((iso) => {
    const created = new Date(iso);
    const name = snapshotName(created);
    return { name, dir: `/b/${name}`, created };
  });
}

const names = (refs: Array<{ name: string }>): string[] => refs.map((r) => r.name).sort();

describe('retention (restic-like)', () => {
  const all = snaps(
    '2026-09-01T01:00:00Z',
    '2026-09-01T23:00:00Z',
    '2026-09-02T10:00:00Z',
    '2026-09-07T10:00:00Z', // Monday of the next ISO week
    '2026-09-07T11:00:00Z',
    '2026-09-08T09:00:00Z',
  );

  it('--keep-last N keeps the N newest', () => {
    const plan = planRetention(all, { keepLast: 2 });
    expect(names(plan.keep)).toEqual(names(all.slice(4)));
    expect(plan.remove).toHaveLength(4);
  });

  it('--keep-daily N keeps the newest of each of the N newest days', () => {
    const plan = planRetention(all, { keepDaily: 3 });
    expect(names(plan.keep)).toEqual(names([all[2]!, all[4]!, all[5]!]));
  });

  it('--keep-weekly N keeps the newest of each ISO week', () => {
    const plan = planRetention(all, { keepWeekly: 5 });
    expect(names(plan.keep)).toEqual(names([all[2]!, all[5]!]));
  });

  it('rules add up, and a snapshot kept by several rules lists every reason', () => {
    const plan = planRetention(all, { keepLast: 1, keepDaily: 2, keepWeekly: 2 });
    expect(names(plan.keep)).toEqual(names([all[2]!, all[4]!, all[5]!]));
    expect(plan.keep.find((k) => k.name === all[5]!.name)?.reasons).toEqual(['last', 'daily', 'weekly']);
    expect(plan.remove.map((r) => r.name)).not.toContain(all[5]!.name);
  });

  it('always keeps the protected (new) snapshot', () => {
    const plan = planRetention(all, { keepDaily: 1 }, all[0]!.name);
    expect(plan.keep.map((k) => k.name)).toContain(all[0]!.name);
  });

  it('computes ISO weeks across year boundaries', () => {
    expect(weekKey(new Date('2021-01-03T12:00:00Z'))).toBe('2020-W53');
    expect(weekKey(new Date('2024-12-30T00:00:00Z'))).toBe('2025-W01');
    expect(weekKey(new Date('2026-09-07T00:00:00Z'))).toBe('2026-W37');
    expect(weekKey(new Date('2026-09-06T23:59:59Z'))).toBe('2026-W36');
  });
});

describe('retention per session', () => {
  const holding = (iso: string, sessions: string[] | null): SnapshotContents => ({ ...snaps(iso)[0]!, sessions });

  it('a snapshot stays while it is among the N newest copies of any session in it', () => {
    const ab = holding('2026-09-01T01:00:00Z', ['A', 'B']);
    const a1 = holding('2026-09-01T02:00:00Z', ['A']);
    const a2 = holding('2026-09-01T03:00:00Z', ['A']);
    const plan = planSessionRetention([ab, a1, a2], { keepLast: 1 }, a2.name);
    expect(names(plan.keep)).toEqual(names([ab, a2]));
    expect(plan.remove.map((r) => r.name)).toEqual([a1.name]);
  });

  it('daily and weekly rules count each session on its own', () => {
    const b = holding('2026-09-01T01:00:00Z', ['B']);
    const a = [holding('2026-09-02T01:00:00Z', ['A']), holding('2026-09-03T01:00:00Z', ['A'])];
    const plan = planSessionRetention([b, ...a], { keepDaily: 1 });
    expect(names(plan.keep)).toEqual(names([b, a[1]!]));
  });

  it('empty snapshots never push out ones with data, and are bounded among themselves', () => {
    const data = [holding('2026-09-01T01:00:00Z', ['A']), holding('2026-09-01T02:00:00Z', ['A'])];
    const empty = [
      holding('2026-09-01T03:00:00Z', []),
      holding('2026-09-01T04:00:00Z', []),
      holding('2026-09-01T05:00:00Z', []),
    ];
    const plan = planSessionRetention([...data, ...empty], { keepLast: 2 }, empty[2]!.name);
    expect(names(plan.keep)).toEqual(names([...data, empty[1]!, empty[2]!]));
    expect(plan.remove.map((r) => r.name)).toEqual([empty[0]!.name]);
  });

  it('a snapshot whose manifest cannot be read is kept', () => {
    const unknown = holding('2026-09-01T01:00:00Z', null);
    const plan = planSessionRetention([unknown, holding('2026-09-02T01:00:00Z', ['A'])], { keepLast: 1 });
    expect(plan.keep.find((k) => k.name === unknown.name)?.reasons).toEqual(['unreadable-manifest']);
    expect(plan.remove).toEqual([]);
  });
});

describe('snapshot names', () => {
  it('are UTC timestamps without colons that parse back', () => {
    const d = new Date('2026-09-03T12:34:56.789Z');
    expect(snapshotName(d)).toBe('2026-09-03T12-34-56.789Z');
    expect(parseSnapshotName('2026-09-03T12-34-56.789Z')?.toISOString()).toBe(d.toISOString());
    expect(parseSnapshotName('.2026-09-03T12-34-56.789Z.partial')).toBeUndefined();
    expect(parseSnapshotName('notes')).toBeUndefined();
  });
});
