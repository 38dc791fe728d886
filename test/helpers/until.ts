/**
 * The tests' one wait with a deadline: polls `probe` until it returns a value
 * (anything but undefined or false), for at most `withinMs`, then fails naming
 * what it waited for. A test waits for a state this way, never by sleeping a
 * fixed time. Between probes it yields `everyMs` (default 10 ms); a probe that
 * costs something (an HTTP query, a process listing in a container) passes a
 * longer interval.
 */
export async function until<T>(
  what: string,
  withinMs: number,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  everyMs = 10,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
