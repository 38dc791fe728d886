import fs from 'node:fs';
import { bundledRuntime } from './runtime.js';

let cached: string | undefined;

/** agyctl's version: fixed in the executable, else from package.json (read once). */
export function agyctlVersion(): string {
  cached ??=
    bundledRuntime()?.version ??
    (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  return cached;
}
