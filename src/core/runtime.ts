/**
 * How this agyctl runs: from the npm package (dist/ on the machine's Node) or
 * as the single executable (one esbuild bundle inside a Node SEA). The
 * executable's entry registers what differs before anything else runs; code
 * below asks here instead of looking for files next to itself, which the
 * executable does not have.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A SQLite addon that is loaded, and the file it was loaded from. */
export interface LoadedBinding {
  addon: object;
  path: string;
}

export interface BundledRuntime {
  /** agyctl's version, fixed when the executable was built. */
  version: string;
  /** better-sqlite3's version, fixed when the executable was built. */
  betterSqlite3: string;
  /** Writes out (once) and loads the embedded addon; throws an AgyError naming the fix when it cannot. */
  sqliteBinding(): LoadedBinding;
  /** The snapshot worker's code, run with `new Worker(source, { eval: true })`, and the data it needs. */
  worker(): { source: string; data: Record<string, unknown> };
}

let bundled: BundledRuntime | undefined;

/**
 * The arguments that run agyctl again with process.execPath: none for the
 * executable (it is agyctl), else bin/agyctl.js (from dist/core/runtime.js).
 */
export function agyctlEntryArgs(): string[] {
  return bundled ? [] : [fileURLToPath(new URL('../../bin/agyctl.js', import.meta.url))];
}

export function useBundledRuntime(runtime: BundledRuntime): void {
  bundled = runtime;
}

/** The executable's runtime, or undefined when agyctl runs from the npm package. */
export function bundledRuntime(): BundledRuntime | undefined {
  return bundled;
}

let cached: string | undefined;

/** agyctl's version: fixed in the executable, else from package.json (read once). */
export function agyctlVersion(): string {
  cached ??=
    bundledRuntime()?.version ??
    (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  return cached;
}
