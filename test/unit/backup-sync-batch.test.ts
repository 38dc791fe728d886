// SyncBatch: the background fsyncs of a backup run. flush() waits for every
// added file (also those added while others run), never runs more than a few
// at once, and reports the first failure instead of losing it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SyncBatch } from '../../src/backup/snapshot-files.js';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function files(n: number): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-sync-'));
  dirs.push(dir);
  return Array.from({ length: n }, (_, i) => {
    const f = path.join(dir, `f${i}`);
    fs.writeFileSync(f, `data ${i}`);
    return f;
  });
}

/** Counts handle.sync() calls on the files opened through fs.promises.open, and the most in flight at once. */
function watchSyncs(): { synced: string[]; peak: () => number } {
  const synced: string[] = [];
  let running = 0;
  let peak = 0;
  const open = fs.promises.open.bind(fs.promises);
  vi.spyOn(fs.promises, 'open').mockImplementation(async (file, flags) => {
    const handle = await open(file, flags);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 2));
      await sync();
      synced.push(String(file));
      running -= 1;
    };
    return handle;
  });
  return { synced, peak: () => peak };
}

describe('SyncBatch', () => {
  it('fsyncs every file added, also while others run, at most 4 at a time', async () => {
    const watch = watchSyncs();
    const batch = new SyncBatch();
    const all = files(12);
    for (const f of all.slice(0, 9)) batch.add(f);
    await new Promise((r) => setTimeout(r, 3));
    for (const f of all.slice(9)) batch.add(f);
    await batch.flush();
    expect([...watch.synced].sort()).toEqual([...all].sort());
    expect(watch.peak()).toBeGreaterThan(1);
    expect(watch.peak()).toBeLessThanOrEqual(4);
  });

  it('flush throws the first failure after the others finished', async () => {
    const watch = watchSyncs();
    const batch = new SyncBatch();
    const [a, b] = files(2);
    batch.add(a!);
    batch.add(path.join(path.dirname(a!), 'gone'));
    batch.add(b!);
    await expect(batch.flush()).rejects.toMatchObject({ code: 'ENOENT' });
    expect([...watch.synced].sort()).toEqual([a, b].sort());
  });

  it('flush of an empty batch resolves', async () => {
    await expect(new SyncBatch().flush()).resolves.toBeUndefined();
  });
});
