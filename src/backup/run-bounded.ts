/**
 * Run `fn` over items with at most `limit` in flight, results in input order.
 * When one call throws, or `stop()` turns true, nothing new starts; the calls
 * already running are awaited (they may be writing into a directory the
 * caller is about to remove), then the first error (or `stopped()`) is thrown.
 */
export async function runBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  stop: () => boolean,
  stopped: () => Error,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < items.length && !failure) {
      // Let signal handlers run between items (some work inside fn is synchronous).
      await new Promise((resolve) => setImmediate(resolve));
      if (stop()) {
        failure ??= { err: stopped() };
        return;
      }
      if (next >= items.length || failure) return; // another lane took the last item meanwhile
      const i = next;
      next += 1;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure) throw failure.err;
  return results;
}
