/**
 * The browser shims' log: one line per launcher run, the program's name and
 * its arguments separated by tabs (the shim turns tabs and newlines inside
 * an argument into spaces). `gio open URL`, `kioclient exec URL`, a
 * `BROWSER` run with `%s` left in, `xdg-open --version`: every run is
 * evidence, whether or not it carried a sign-in URL.
 */
import { urlsInText } from './text-source.js';

export interface LauncherRun {
  program: string;
  args: string[];
}

export function parseLauncherLog(text: string): LauncherRun[] {
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const [program = '?', ...args] = l.split('\t');
      return { program, args };
    });
}

/** The URLs a launcher run was given, in argument order. */
export function launcherUrls(run: LauncherRun): string[] {
  return run.args.flatMap((a) => urlsInText(a));
}

/** Why a run carried no URL, in words a bug report can use. */
export function noUrlReason(run: LauncherRun): string {
  if (run.args.length === 0) return 'ran without arguments';
  if (run.args.some((a) => a.includes('%s'))) return 'got a literal %s (a BROWSER template nobody filled in), no URL';
  return 'got no URL among its arguments';
}
