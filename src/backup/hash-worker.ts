/** Worker thread: sha256 of one file (workerData.file), so hashing a large snapshot overlaps its integrity check. */
import { parentPort, workerData } from 'node:worker_threads';
import { sha256File } from './files.js';

try {
  parentPort!.postMessage({ sha256: sha256File((workerData as { file: string }).file) });
} catch (err) {
  parentPort!.postMessage({
    error: err instanceof Error ? err.message : String(err),
    code: (err as { code?: unknown }).code,
  });
}
