import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  acquireLock,
  freshName,
  listSnapshots,
  partialName,
  removeLeftovers,
  type SnapshotSummary,
} from '../../src/backup/layout.js';
import type { ManifestProblem } from '../../src/backup/manifest.js';
import { renderList } from '../../src/cli/commands/backup/list.js';
import { AgyError } from '../../src/core/errors.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-backup-layout-');

function mkSnapshot(root: string, name: string, manifest = true): void {
  fs.mkdirSync(path.join(root, name));
  if (manifest) fs.writeFileSync(path.join(root, name, 'manifest.json'), '{}');
}

describe('backup directory layout', () => {
  it('lists only timestamp-named directories with a manifest, newest first', () => {
    const root = tmp();
    mkSnapshot(root, '2026-09-01T00-00-00.000Z');
    mkSnapshot(root, '2026-09-02T00-00-00.000Z');
    mkSnapshot(root, '2026-09-03T00-00-00.000Z', false); // no manifest: not a snapshot
    mkSnapshot(root, '.2026-09-04T00-00-00.000Z.partial');
    mkSnapshot(root, 'my-notes');
    expect(listSnapshots(root).map((s) => s.name)).toEqual(['2026-09-02T00-00-00.000Z', '2026-09-01T00-00-00.000Z']);
  });

  it('removes .partial and .deleting leftovers and nothing else', () => {
    const root = tmp();
    mkSnapshot(root, '.2026-09-04T00-00-00.000Z.partial', false);
    mkSnapshot(root, '.2026-09-01T00-00-00.000Z.deleting');
    mkSnapshot(root, '2026-09-02T00-00-00.000Z');
    fs.writeFileSync(path.join(root, '.lock'), '{}');
    expect(removeLeftovers(root).sort()).toEqual([
      '.2026-09-01T00-00-00.000Z.deleting',
      '.2026-09-04T00-00-00.000Z.partial',
    ]);
    expect(fs.readdirSync(root).sort()).toEqual(['.lock', '2026-09-02T00-00-00.000Z']);
  });

  it('never hands out a name that exists', () => {
    const root = tmp();
    const now = new Date('2026-09-03T12:00:00.000Z');
    mkSnapshot(root, '2026-09-03T12-00-00.000Z');
    mkSnapshot(root, '.2026-09-03T12-00-00.001Z.partial', false);
    expect(freshName(root, now)).toBe('2026-09-03T12-00-00.002Z');
  });
});

describe('backup directory layout: planted names', () => {
  it('a dangling link under the next name counts as taken; work dir names are unguessable', () => {
    const root = tmp();
    fs.symlinkSync(path.join(root, 'nowhere'), path.join(root, '2026-09-03T12-00-00.000Z'));
    fs.symlinkSync(path.join(root, 'nowhere'), path.join(root, '.2026-09-03T12-00-00.001Z.abcdefabcdef.partial'));
    expect(freshName(root, new Date('2026-09-03T12:00:00.000Z'))).toBe('2026-09-03T12-00-00.002Z');
    const a = partialName('2026-09-03T12-00-00.002Z');
    expect(a).toMatch(/^\.2026-09-03T12-00-00\.002Z\.[0-9a-f]{12}\.partial$/);
    expect(partialName('2026-09-03T12-00-00.002Z')).not.toBe(a);
  });
});

describe('backup lock', () => {
  it('a second run into the same directory is a usage error naming the holder pid', () => {
    const root = tmp();
    const lock = acquireLock(root);
    try {
      expect(() => acquireLock(root)).toThrow(AgyError);
      try {
        acquireLock(root);
      } catch (err) {
        expect((err as AgyError).exit).toBe(2);
        expect((err as AgyError).message).toContain(`pid ${process.pid}`);
      }
    } finally {
      lock.release();
    }
    expect(fs.existsSync(path.join(root, '.lock'))).toBe(false);
  });

  it('takes over a lock whose owner is dead', () => {
    const root = tmp();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    fs.writeFileSync(
      path.join(root, '.lock'),
      JSON.stringify({ pid: deadPid, host: os.hostname(), procStart: '1', since: 'then' }),
    );
    const lock = acquireLock(root);
    expect(JSON.parse(fs.readFileSync(path.join(root, '.lock'), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('treats a lock from another host as held', () => {
    const root = tmp();
    fs.writeFileSync(
      path.join(root, '.lock'),
      JSON.stringify({ pid: 1, host: 'elsewhere.example', procStart: null, since: 'then' }),
    );
    expect(() => acquireLock(root)).toThrow(/pid 1 on elsewhere\.example/);
  });
});

describe('backup list: a manifest that cannot be read', () => {
  const summary = (problemKind: ManifestProblem): SnapshotSummary => ({
    name: '2026-09-03T02-00-00.114Z',
    path: '/b/2026-09-03T02-00-00.114Z',
    created: '2026-09-03T02:00:00.114Z',
    host: null,
    sessions: null,
    failed: null,
    bytes: null,
    proven: false,
    problem: 'why',
    problemKind,
  });
  it.each([
    ['newer', /written by a newer agyctl: use a newer agyctl to read this snapshot$/],
    ['unreadable', /manifest unreadable: fix the permissions, or run as its owner$/],
    ['damaged', /manifest damaged or foreign \(agyctl backup verify 2026-09-03T02-00-00\.114Z\)$/],
    ['foreign', /manifest damaged or foreign \(agyctl backup verify 2026-09-03T02-00-00\.114Z\)$/],
  ] as const)('%s: its row gives the fix', (kind, note) => {
    const [, row] = renderList('/b', [summary(kind)]);
    expect(row).toMatch(/^2026-09-03T02-00-00\.114Z\s+\?\s+\?\s+/);
    expect(row).toMatch(note);
  });
});
