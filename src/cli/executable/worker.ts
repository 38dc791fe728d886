/**
 * The single executable's snapshot worker (run from its code by
 * worker-pool.ts): the main thread wrote the SQLite addon out and passes its
 * path; this loads the same file, then runs the ordinary worker.
 */
import { workerData } from 'node:worker_threads';
import { useBundledRuntime } from '../../core/runtime.js';
import '../../backup/snapshot-worker.js';

declare const AGYCTL_BUILD: { version: string; betterSqlite3: string };

const file = (workerData as { sqliteBinding: string }).sqliteBinding;

useBundledRuntime({
  ...AGYCTL_BUILD,
  sqliteBinding: () => {
    const module = { exports: {} };
    process.dlopen(module, file);
    return { addon: module.exports, path: file };
  },
  worker: () => {
    throw new Error('a snapshot worker starts no workers');
  },
});
