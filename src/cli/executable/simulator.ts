/**
 * `agyctl simulator [flags]` in the single executable (and so in the .deb):
 * the server simulator (src/sim, docs/simulator.md), so that a box with no
 * Node can try agyctl against it. The simulator stays isolated from product
 * code: this entry file is the one place outside src/sim that imports it
 * (dependency-cruiser `simulator-is-isolated` names it; docs/architecture.md),
 * and the executable's main.ts reaches it only for this argument.
 */
import { runSimulator, useSqliteAddon } from '../../sim/main.js';

/** Runs the simulator in this process, with the executable's SQLite addon; it ends the process as its launcher does. */
export function runEmbeddedSimulator(sqliteAddon: () => object): void {
  // The simulator reads its own flags from argv[2] on, as when its launcher runs it.
  process.argv.splice(2, 1);
  useSqliteAddon(sqliteAddon);
  runSimulator((code) => process.exit(code));
}
