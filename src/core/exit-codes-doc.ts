/** Renders the exit-code table (src/core/errors.ts) as docs/exit-codes.md. A test keeps the two in agreement. */
import { EXIT_TABLE } from './errors.js';

export function renderExitCodesMarkdown(): string {
  const rows = EXIT_TABLE.map((e) => `| ${e.exit} | \`${e.name}\` | ${e.meaning} |`);
  return [
    '# Exit codes',
    '',
    '<!-- Generated from src/core/errors.ts by `npm run docs:exit-codes`. Do not edit by hand. -->',
    '',
    'Exit codes are API: scripts and CI may branch on them, and they do not change between releases.',
    'The same code is returned with and without `--json`; with `--json` the document also carries',
    '`error.code` (a stable kebab-case name) and `error.exit`. On a box without this file, `agyctl help exit-codes`',
    'prints the same table (`--json`: `exitCodes`, a list of `exit`, `name`, `meaning`); every `--help` points there.',
    '',
    '| exit | name | meaning |',
    '| --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

/** The same table for a terminal (`agyctl help exit-codes`): the docs are not beside an installed binary's users. */
export function renderExitCodesText(docPath: (text: string) => string = (text) => text): string {
  const rows = EXIT_TABLE.map(
    (e) => `${String(e.exit).padStart(3)}  ${e.name.padEnd(11)}  ${docPath(e.meaning.replace(/`/g, ''))}`,
  );
  return ['Exit codes (the same with and without --json; --json adds error.code and error.exit):', ...rows, ''].join(
    '\n',
  );
}
