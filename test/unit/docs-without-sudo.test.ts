/** A minimal Debian has no sudo: every doc that says `sudo dpkg -i` also says how to do it without sudo. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/root.js';

const docs = (): string[] => [
  path.join(ROOT, 'README.md'),
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .map((n) => path.join(ROOT, 'docs', n)),
];

describe('install docs', () => {
  it('every doc with `sudo dpkg -i` says how without sudo', () => {
    const withSudo = docs().filter((f) => fs.readFileSync(f, 'utf8').includes('sudo dpkg -i'));
    expect(withSudo.length).toBeGreaterThan(0);
    for (const f of withSudo)
      expect(fs.readFileSync(f, 'utf8'), f).toMatch(/has no `sudo`: run the\s+same commands as root, without\s+`sudo`/);
  });
});
