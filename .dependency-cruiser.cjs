/**
 * Import rules for agyctl (docs/architecture.md). Arrows point down only:
 *   cli -> probe/connect/backup -> login/check -> settings -> profiles -> acp -> util -> core
 * `npm test` runs `depcruise` with these rules; a violation names the import.
 */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'No import cycles between files.', from: {}, to: { circular: true } },
    {
      name: 'domain-knows-no-cli',
      severity: 'error',
      comment: 'Only src/cli may import src/cli: use cases return reports, the CLI renders them.',
      from: { path: '^src/(?!cli/)' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'profiles-import-no-use-case',
      severity: 'error',
      comment: 'Profiles are per-server knowledge: they may use acp, core and util, never a use case.',
      from: { path: '^src/profiles/' },
      to: { path: '^src/(?!profiles/|acp/|core/|util/)' },
    },
    {
      name: 'acp-is-protocol-only',
      severity: 'error',
      comment: 'src/acp is JSON-RPC and the server process: it imports only core and util.',
      from: { path: '^src/acp/' },
      to: { path: '^src/(?!acp/|core/|util/)' },
    },
    {
      name: 'core-is-the-bottom',
      severity: 'error',
      comment: 'src/core imports nothing from src but core: every arrow points down to it.',
      from: { path: '^src/core/' },
      to: { path: '^src/(?!core/)' },
    },
    {
      name: 'util-uses-only-core',
      severity: 'error',
      comment: 'src/util imports nothing from src but util and core.',
      from: { path: '^src/util/' },
      to: { path: '^src/(?!core/|util/)' },
    },
    {
      name: 'simulator-is-isolated',
      severity: 'error',
      comment:
        'Product code never imports the simulator; only src/sim, scripts and tests do, and the single executable\'s `agyctl simulator` entry (an entry file, not product code; docs/architecture.md).',
      from: { path: '^src/(?!sim/)', pathNot: '^src/cli/executable/simulator\\.ts$' },
      to: { path: '^src/sim/' },
    },
    {
      name: 'simulator-imports-no-product-code',
      severity: 'error',
      comment: 'The simulator stands in for Google\'s server: it must not borrow agyctl\'s code.',
      from: { path: '^src/sim/' },
      to: { path: '^src/(?!sim/)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
