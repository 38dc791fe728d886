import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgyError, EXIT, EXIT_TABLE, toAgyError } from '../../src/core/errors.js';
import { renderExitCodesMarkdown } from '../../src/core/exit-codes-doc.js';
import { ROOT } from '../helpers/cli.js';

describe('exit-code table', () => {
  it('docs/exit-codes.md is exactly what the table renders (run npm run docs:exit-codes)', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'exit-codes.md'), 'utf8');
    expect(doc).toBe(renderExitCodesMarkdown());
  });

  it('lists every EXIT constant once, with the binding numbers', () => {
    expect(EXIT).toEqual({
      ok: 0,
      internal: 1,
      usage: 2,
      auth: 3,
      server: 4,
      timeout: 5,
      findings: 6,
      interrupted: 130,
      readerGone: 141,
    });
    expect(EXIT_TABLE.map((e) => e.exit).sort((a, b) => a - b)).toEqual(Object.values(EXIT).sort((a, b) => a - b));
    for (const row of EXIT_TABLE) expect(EXIT[row.name]).toBe(row.exit);
  });

  it('130 documents every signal main() maps to it (SIGINT, SIGTERM, SIGHUP)', () => {
    const main = fs.readFileSync(path.join(ROOT, 'src', 'cli', 'main.ts'), 'utf8');
    const looped = [...(/for \(const sig of \[([^\]]+)\]/.exec(main)?.[1] ?? '').matchAll(/'(SIG[A-Z]+)'/g)].map(
      (m) => m[1]!,
    );
    // SIGHUP has its own handler (a login hands over to its supervisor; anything else ends with 130).
    const single = [...main.matchAll(/process\.on\('(SIG[A-Z]+)'/g)].map((m) => m[1]!);
    const handled = [...new Set([...looped, ...single])];
    expect(handled).toEqual(expect.arrayContaining(['SIGINT', 'SIGTERM', 'SIGHUP']));
    const meaning = EXIT_TABLE.find((e) => e.exit === 130)!.meaning;
    for (const sig of handled) expect(meaning).toContain(sig);
  });

  it('turns unknown throwables into internal errors (exit 1) and keeps AgyErrors', () => {
    const known = new AgyError(EXIT.auth, 'not-authenticated', 'no', { hint: 'run: agyctl login' });
    expect(toAgyError(known)).toBe(known);
    expect(toAgyError(new TypeError('boom')).exit).toBe(1);
    expect(known.toJSON()).toEqual({ code: 'not-authenticated', exit: 3, message: 'no', hint: 'run: agyctl login' });
  });
});
