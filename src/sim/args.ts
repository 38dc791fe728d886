// Command-line flags. RC01 has only --debug and --notices; the registry
// launcher adds --uid=. All are accepted and ignored (RC01's --debug prints
// nothing either); anything else is a usage error, exit 2.

export const USAGE = 'usage: agy-acp-sim [--debug] [--notices] [--uid=<id>]';

export class UsageError extends Error {}

export function checkArgs(argv: readonly string[]): void {
  for (const arg of argv) {
    if (arg === '--debug' || arg === '--notices' || arg.startsWith('--uid=')) continue;
    throw new UsageError(arg.startsWith('-') ? `unknown flag '${arg}'` : `unexpected argument '${arg}'`);
  }
}
