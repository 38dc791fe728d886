#!/usr/bin/env node
/**
 * Writes agyctl's man pages, one per command (`agyctl --json __man-pages`,
 * rendered from the command tree `--help` is made of), into DIR (default
 * man/): the npm package's prepack runs it; package.json's `man` lists
 * them, so that npm links them into PREFIX/share/man/man1. The .deb gets the same
 * pages from the executable (scripts/release.mjs).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.resolve(process.argv[2] ?? path.join(ROOT, 'man'));
const out = execFileSync(process.execPath, [path.join(ROOT, 'bin/agyctl.js'), '--json', '__man-pages'], {
  env: { ...process.env, NO_COLOR: '1' },
  maxBuffer: 16 * 1024 * 1024,
});
const { pages } = JSON.parse(out.toString());
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(dir, { recursive: true });
for (const page of pages) fs.writeFileSync(path.join(dir, page.file), page.roff);
// npm links only what package.json's `man` lists (a tarball's directories.man is not expanded on install).
const listed = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).man ?? [];
const written = pages.map((p) => `./man/${p.file}`);
if (JSON.stringify(listed) !== JSON.stringify(written)) {
  console.error(`man-pages: package.json "man" must list the pages, in this order: ${JSON.stringify(written)}`);
  process.exit(1);
}
console.error(`man-pages: ${pages.length} pages in ${path.relative(process.cwd(), dir) || '.'}`);
