/**
 * The single executable's entry: `npm run release` bundles it with esbuild and
 * embeds the bundle in Node's single-executable application (SEA), with the
 * SQLite addon and the snapshot worker's bundle as assets. It registers what
 * the executable carries, then runs main() as bin/agyctl.js does, or, for
 * `agyctl simulator`, the server simulator (simulator.ts).
 */
import sea from 'node:sea';
import { bindingDirs, loadEmbeddedBinding } from '../../backup/embedded-binding.js';
import { type LoadedBinding, useBundledRuntime } from '../../core/runtime.js';
import { main } from '../main.js';

/** Fixed by the release build (esbuild's define). */
declare const AGYCTL_BUILD: { version: string; betterSqlite3: string };

let binding: LoadedBinding | undefined;
const sqliteBinding = (): LoadedBinding => {
  binding ??= loadEmbeddedBinding(
    new Uint8Array(sea.getRawAsset('better_sqlite3.node') as ArrayBuffer),
    bindingDirs(process.env),
  );
  return binding;
};

useBundledRuntime({
  ...AGYCTL_BUILD,
  sqliteBinding,
  worker: () => ({
    source: sea.getAsset('snapshot-worker.js', 'utf8'),
    data: { sqliteBinding: sqliteBinding().path },
  }),
});

/** `agyctl simulator ...`: the server simulator instead of agyctl (docs/simulator.md, "On a box without Node"). */
const SIMULATOR_ARG = 'simulator';

if (process.argv[2] === SIMULATOR_ARG) {
  void import('./simulator.js').then(({ runEmbeddedSimulator }) =>
    runEmbeddedSimulator(() => sqliteBinding().addon as object),
  );
} else void main();
