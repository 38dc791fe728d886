/**
 * Waiting with a deadline. Every wait in agyctl goes through here so that no
 * wait is unbounded and Ctrl-C (an AbortSignal) ends it promptly.
 */
import { InterruptedError, TimeoutError } from '../core/errors.js';
import { formatDuration } from './duration.js';

export interface WaitOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Message of the TimeoutError thrown when the deadline passes. */
  what: string;
  hint?: string;
}

export function withDeadline<T>(work: Promise<T>, options: WaitOptions): Promise<T> {
  const { timeoutMs, signal } = options;
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new InterruptedError());
      return;
    }
    const onAbort = (): void => {
      cleanup();
      reject(new InterruptedError());
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new TimeoutError(`Timed out after ${formatDuration(timeoutMs)} ${options.what}.`, options.hint));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (err: unknown) => {
        cleanup();
        reject(err);
      },
    );
  });
}

/** A deadline shared by several steps: each step gets what is left. */
export class Budget {
  readonly startedAt = Date.now();
  constructor(readonly totalMs: number) {}
  elapsedMs(): number {
    return Date.now() - this.startedAt;
  }
  remainingMs(): number {
    return Math.max(0, this.totalMs - this.elapsedMs());
  }
}

/**
 * A poll interval of `ms` that ends early on Ctrl-C (`signal`) or when
 * `until` settles (e.g. the process being polled exits). Never rejects: the
 * caller looks at what changed.
 */
export function pause(
  ms: number,
  endsEarly: { signal?: AbortSignal | undefined; until?: Promise<unknown> } = {},
): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      endsEarly.signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (endsEarly.signal?.aborted) return done();
    endsEarly.signal?.addEventListener('abort', done, { once: true });
    void endsEarly.until?.then(done, done);
  });
}
