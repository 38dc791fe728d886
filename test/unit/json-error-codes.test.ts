/**
 * `error.code` is API (docs/json.md). Every code agyctl can put there must
 * be in the documented list, with the exit code it comes with.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgyError, DEPRECATED_ERROR_CODES, EXIT } from '../../src/core/errors.js';
import { ROOT } from '../helpers/root.js';

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return p.endsWith(`${path.sep}sim`) ? [] : sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** code -> exit name, from `new AgyError(EXIT.x, 'code'` (also `cond ? 'a' : 'b'`), `super(EXIT.x, 'code'` and `{ code: 'x', exit: EXIT.y }`. */
function codesInSource(): Map<string, string> {
  const codes = new Map<string, string>();
  for (const file of sources(path.join(ROOT, 'src'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:AgyError|super)\(\s*EXIT\.(\w+),\s*([^;]{0,80})/g)) {
      const head = m[2]!.split(/,\s*[`'"A-Z]/)[0]!;
      for (const c of `${head},`.matchAll(/'([a-z]+(?:-[a-z]+)*)'/g)) codes.set(c[1]!, m[1]!);
    }
    for (const m of text.matchAll(/\bcode: '([a-z]+(?:-[a-z]+)+)', exit: EXIT\.(\w+)/g)) codes.set(m[1]!, m[2]!);
  }
  return codes;
}

/** The table under "## Error codes" in docs/json.md: | `code` | exit | meaning |. */
function documented(): Map<string, number> {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'json.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Error codes'));
  const table = section.slice(0, section.indexOf('\n## ', 5) === -1 ? undefined : section.indexOf('\n## ', 5));
  return new Map([...table.matchAll(/^\| `([a-z-]+)` \| (\d+) \|/gm)].map((m) => [m[1]!, Number(m[2])]));
}

describe('docs/json.md error codes', () => {
  it('lists every error.code agyctl emits, with its exit code', () => {
    const docs = documented();
    const missing: string[] = [];
    for (const [code, exitName] of codesInSource()) {
      const exit = EXIT[exitName as keyof typeof EXIT];
      if (docs.get(code) !== exit) missing.push(`${code} (exit ${exit})`);
    }
    expect(missing).toEqual([]);
    // The scan must see these codes (known to be thrown in src/), or it proves nothing.
    expect([...codesInSource().keys()]).toEqual(
      expect.arrayContaining([
        'settings-invalid',
        'backup-write-failed',
        'restore-refused',
        'snapshot-damaged',
        'ssh-failed',
        'timeout',
      ]),
    );
  });
});

describe('one code per meaning', () => {
  it('a renamed code is emitted under its new name, the old one beside it for a version', () => {
    const err = new AgyError(EXIT.usage, 'no-login', 'No login is recorded.');
    expect(err.code).toBe('no-pending-login');
    expect(err.toJSON()).toMatchObject({ code: 'no-pending-login', deprecatedCode: 'no-login', exit: 2 });
    expect(new AgyError(EXIT.usage, 'login-record-unsafe', 'x').code).toBe('login-record-unusable');
    expect(new AgyError(EXIT.usage, 'no-pending-login', 'x').toJSON()).not.toHaveProperty('deprecatedCode');
  });

  it('docs/json.md lists every renamed code with its new name', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'json.md'), 'utf8');
    const renamed = doc.slice(doc.indexOf('### Renamed codes'));
    const rows = new Map([...renamed.matchAll(/^\| `([a-z-]+)` \| `([a-z-]+)` \|/gm)].map((m) => [m[1], m[2]]));
    expect(Object.fromEntries(rows)).toEqual(DEPRECATED_ERROR_CODES);
    // No other pair of documented codes shares a meaning.
    const meanings = [...doc.matchAll(/^\| `([a-z-]+)` \| \d+ \| (.+) \|$/gm)].map((m) => m[2]);
    const shared = meanings.filter((m, i) => meanings.indexOf(m) !== i && !/^a path that cannot be used/.test(m ?? ''));
    expect(shared).toEqual([]);
  });
});
