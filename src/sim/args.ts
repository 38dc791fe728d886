// Command-line flags. RC01 has only --debug and --notices; the registry
// launcher adds --uid=. All are accepted and ignored (RC01's --debug prints
// nothing either); anything else is a usage error, exit 2.

export const USAGE = 'usage: agy-acp-sim [--debug] [--notices] [--uid=<id>] | --seed-conversations';

/** Not a server run: write conversations with history into $HOME's state dir and exit (docs/simulator.md). */
export const SEED_FLAG = '--seed-conversations';

export class UsageError extends Error {}

/** 'seed' for `--seed-conversations` alone; 'serve' otherwise (the server's own flags). */
export function checkArgs(argv: readonly string[]): 'serve' | 'seed' {
  if (argv.length === 1 && argv[0] === SEED_FLAG) return 'seed';
  for (const arg of argv) {
    if (arg === '--debug' || arg === '--notices' || arg.startsWith('--uid=')) continue;
    if (arg === SEED_FLAG) throw new UsageError(`${SEED_FLAG} takes no other argument`);
    throw new UsageError(arg.startsWith('-') ? `unknown flag '${arg}'` : `unexpected argument '${arg}'`);
  }
  return 'serve';
}
