/**
 * A small pool of worker threads for snapshot work (snapshot-work.ts, run by
 * the shim snapshot-worker.ts). Workers start lazily, on the first task, so
 * a run that only reuses unchanged sessions never pays for them. Tasks queue
 * FIFO; each worker runs one at a time. `abort()` tells running copies to
 * stop between retries; `close()` terminates the workers (call it in finally).
 *
 * Two policies run tasks on the calling thread instead:
 * - `inThread`: every task, no workers at all. For the unit tests, which run
 *   from the TypeScript sources where a worker cannot load; the work is the
 *   same functions either way.
 * - `oneSession`: a run with a single session to snapshot. Its copy runs
 *   here while the worker boots (the boot is then off its critical path),
 *   and its hash here while the worker checks: one worker is enough, and on
 *   two cores a second one booting only slows the copy down.
 *
 * `runBounded` is the plain concurrency the run itself uses over sessions:
 * at most N in flight, results in input order, nothing new after a failure
 * or a stop.
 */
import { Worker } from 'node:worker_threads';
import { bundledRuntime } from '../core/runtime.js';
import { runTask, type Task } from './snapshot-work.js';

/** What the pool posts to a worker: one task, and the id its reply carries. */
export interface TaskMessage {
  id: number;
  task: Task;
}

/** What the worker shim posts back for one task. */
export interface TaskReply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: { message: string; code?: unknown; name: string };
}

export interface PoolPolicy {
  inThread?: boolean;
  oneSession?: boolean;
}

/** A task waiting for (or running in) a worker, with the promise its caller awaits. */
interface QueuedTask extends TaskMessage {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/** An error from a worker, rebuilt with its code (SQLITE_FULL, ENOSPC, busy ...) so callers classify it as before. */
export class WorkerTaskError extends Error {
  constructor(
    message: string,
    readonly code: unknown,
    readonly originalName: string,
  ) {
    super(message);
  }
}

export class WorkerPool {
  private readonly abortBuf = new SharedArrayBuffer(4);
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, QueuedTask>();
  private readonly queue: QueuedTask[] = [];
  private readonly dead = new WeakSet<Worker>();
  private started = false;
  private closed = false;
  private nextId = 1;
  private copiedHere = false;

  constructor(
    readonly size: number,
    private readonly policy: PoolPolicy = {},
  ) {}

  run<T>(task: Task): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the snapshot pool is closed'));
    if (this.runsHere(task)) return this.runHere<T>(task);
    this.start();
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, resolve: resolve as (v: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Boot the workers now (they load SQLite while the main thread does other work). */
  warm(): void {
    if (!this.closed) this.start();
  }

  /** Running copies stop at their next retry; queued tasks still run (they are short). */
  abort(): void {
    Atomics.store(new Int32Array(this.abortBuf), 0, 1);
  }

  get aborted(): boolean {
    return Atomics.load(new Int32Array(this.abortBuf), 0) === 1;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new Error('the snapshot pool is closed'));
    const all = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    await Promise.all(all.map((w) => w.terminate()));
  }

  private runsHere(task: Task): boolean {
    if (this.policy.inThread) return true;
    if (!this.policy.oneSession) return false;
    if (task.kind === 'hash') return true;
    if (this.copiedHere || task.kind !== 'copy') return false;
    this.copiedHere = true;
    this.start(); // the worker boots meanwhile, for the check
    return true;
  }

  private async runHere<T>(task: Task): Promise<T> {
    await new Promise((resolve) => setImmediate(resolve)); // the caller goes on first, as with a worker
    return (await runTask(task, () => this.aborted)) as T;
  }

  private start(): void {
    if (this.started || this.policy.inThread) return;
    this.started = true;
    for (let i = 0; i < this.size; i += 1) this.idle.push(this.spawn());
  }

  private spawn(): Worker {
    // The executable has no snapshot-worker.js beside it: it carries the worker's code.
    const bundled = bundledRuntime()?.worker();
    const worker = bundled
      ? new Worker(bundled.source, { eval: true, workerData: { abort: this.abortBuf, ...bundled.data } })
      : new Worker(new URL('./snapshot-worker.js', import.meta.url), { workerData: { abort: this.abortBuf } });
    worker.on('message', (reply: TaskReply) => this.finish(worker, reply));
    worker.on('error', (err) => this.fail(worker, err));
    worker.on('exit', (code) => {
      if (!this.closed) this.fail(worker, new Error(`a snapshot worker exited (${code})`));
    });
    return worker;
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.busy.set(worker, job);
      worker.postMessage({ id: job.id, task: job.task });
    }
  }

  private finish(worker: Worker, reply: TaskReply): void {
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    if (!this.closed) this.idle.push(worker);
    if (job) {
      if (reply.ok) job.resolve(reply.value);
      else job.reject(new WorkerTaskError(reply.error!.message, reply.error!.code, reply.error!.name));
    }
    this.dispatch();
  }

  /** A worker that crashed is replaced (once: 'error' is followed by 'exit'); its task fails. */
  private fail(worker: Worker, err: Error): void {
    if (this.dead.has(worker)) return;
    this.dead.add(worker);
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    const i = this.idle.indexOf(worker);
    if (i >= 0) this.idle.splice(i, 1);
    job?.reject(err);
    if (!this.closed) {
      this.idle.push(this.spawn());
      this.dispatch();
    }
  }
}

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
  { stop, stopped }: { stop: () => boolean; stopped: () => Error },
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
