// runBounded: the concurrency of `backup --jobs`, results in input order, and a
// failure that waits for the running calls before it is thrown.
import { describe, expect, it } from 'vitest';
import { runBounded } from '../../src/backup/worker-pool.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('runBounded', () => {
  it('keeps input order, never exceeds the limit, and handles calls that finish at once', async () => {
    let running = 0;
    let peak = 0;
    const items = Array.from({ length: 17 }, (_, i) => i);
    const out = await runBounded(
      items,
      3,
      async (n) => {
        running += 1;
        peak = Math.max(peak, running);
        if (n % 2 === 0) await sleep(5 - (n % 5)); // odd ones finish without waiting (like reused sessions)
        running -= 1;
        return n * 10;
      },
      { stop: () => false, stopped: () => new Error('stopped') },
    );
    expect(out).toEqual(items.map((n) => n * 10));
    expect(peak).toBeLessThanOrEqual(3);
  });

  it('on a failure starts nothing new, waits for the running calls, then throws the first error', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const err = await runBounded(
      [0, 1, 2, 3, 4, 5],
      2,
      async (n) => {
        started.push(n);
        if (n === 1) throw new Error('disk full');
        await sleep(30);
        finished.push(n);
        return n;
      },
      { stop: () => false, stopped: () => new Error('stopped') },
    ).catch((e: Error) => e);
    expect((err as Error).message).toBe('disk full');
    expect(started).toEqual([0, 1]);
    expect(finished).toEqual([0]);
  });

  it('stops when asked (Ctrl-C) and throws the stop error', async () => {
    let stop = false;
    const err = await runBounded(
      [0, 1, 2, 3],
      1,
      async (n) => {
        if (n === 1) stop = true;
        return n;
      },
      { stop: () => stop, stopped: () => new Error('interrupted') },
    ).catch((e: Error) => e);
    expect((err as Error).message).toBe('interrupted');
  });
});
