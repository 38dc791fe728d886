/**
 * The worker thread of the snapshot pool (worker-pool.ts): a thin shim that
 * runs each task it is sent with snapshot-work.ts and posts the reply. It
 * runs one task at a time (the pool sends the next only after the reply).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runTask } from './snapshot-work.js';
import type { TaskMessage, TaskReply } from './worker-pool.js';

/** Set to 1 by the main thread on Ctrl-C: a vacuum stops between its retries. */
const abortFlag = new Int32Array((workerData as { abort: SharedArrayBuffer }).abort);
const aborted = (): boolean => Atomics.load(abortFlag, 0) === 1;

parentPort!.on('message', async (msg: TaskMessage) => {
  let reply: TaskReply;
  try {
    reply = { id: msg.id, ok: true, value: await runTask(msg.task, aborted) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = {
      id: msg.id,
      ok: false,
      error: { message: e.message, code: (e as { code?: unknown }).code, name: e.name },
    };
  }
  parentPort!.postMessage(reply);
});
