// pause(): the poll interval every polling loop uses. It ends at its time,
// or early on Ctrl-C (the signal) or when the awaited process ends, and
// leaves no listener on the signal behind.
import { describe, expect, it } from 'vitest';
import { pause } from '../../src/util/deadline.js';

const elapsed = async (p: Promise<void>): Promise<number> => {
  const t0 = performance.now();
  await p;
  return performance.now() - t0;
};

describe('pause', () => {
  it('waits its interval when nothing happens', async () => {
    expect(await elapsed(pause(40))).toBeGreaterThanOrEqual(35);
  });

  it('ends early on abort, and at once when already aborted', async () => {
    const ac = new AbortController();
    const waiting = pause(10_000, { signal: ac.signal });
    setTimeout(() => ac.abort(), 10);
    expect(await elapsed(waiting)).toBeLessThan(5_000);
    expect(await elapsed(pause(10_000, { signal: ac.signal }))).toBeLessThan(5_000);
  });

  it('ends early when `until` settles, resolved or rejected', async () => {
    const exited = new Promise((r) => setTimeout(r, 10));
    expect(await elapsed(pause(10_000, { until: exited }))).toBeLessThan(5_000);
    const failed = new Promise((_, reject) => setTimeout(() => reject(new Error('spawn failed')), 10));
    failed.catch(() => {});
    expect(await elapsed(pause(10_000, { until: failed }))).toBeLessThan(5_000);
  });

  it('removes its abort listener when it ends', async () => {
    const ac = new AbortController();
    let added = 0;
    let removed = 0;
    const add = ac.signal.addEventListener.bind(ac.signal);
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.addEventListener = ((...a: Parameters<typeof add>) => {
      added += 1;
      add(...a);
    }) as typeof add;
    ac.signal.removeEventListener = ((...a: Parameters<typeof remove>) => {
      removed += 1;
      remove(...a);
    }) as typeof remove;
    await pause(5, { signal: ac.signal });
    expect(added).toBe(1);
    expect(removed).toBe(1);
    ac.abort();
    await pause(10_000, { signal: ac.signal }); // already aborted: no listener is added at all
    expect(added).toBe(1);
  });
});
