/** Temporary directories and WAL writers a test file makes, removed and stopped after each test. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { Writer } from './wal-writer.js';

export function useScratch(prefix: string): { tmp(): string; keepWriter(w: Writer): Writer } {
  const dirs: string[] = [];
  const writers: Writer[] = [];
  afterEach(async () => {
    for (const w of writers.splice(0)) await w.stop();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  return {
    tmp() {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    keepWriter(w) {
      writers.push(w);
      return w;
    },
  };
}
