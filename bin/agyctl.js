#!/usr/bin/env node
// Thin entry: everything lives in dist/ (built by `npm run build`).
// `agyctl simulator ...` runs the server simulator instead (docs/simulator.md), as the single executable does.
if (process.argv[2] === 'simulator') {
  process.argv.splice(2, 1);
  const { runSimulator } = await import('../dist/sim/main.js');
  runSimulator((code) => process.exit(code));
} else {
  const { main } = await import('../dist/cli/main.js');
  await main();
}
