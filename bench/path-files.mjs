#!/usr/bin/env node
// How many source files a reader follows from a command's entry to its result:
// the static (and dynamic) import closure of the entry files, by directory.
// `agyctl backup`: src/backup/run-backup.ts (argv parsing and rendering add the
// command's own three files). `agyctl login`: the login command and the
// supervisor it starts, the two processes of one login.
// Usage: node bench/path-files.mjs [--list]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PATHS = {
  backup: ['src/backup/run-backup.ts'],
  login: ['src/cli/commands/login/handler.ts', 'src/cli/commands/login-supervisor/handler.ts'],
};
const IMPORT =
  /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|^import\s+['"](\.[^'"]+)['"]/gm;

function closure(entries) {
  const seen = new Set();
  const todo = entries.map((e) => path.join(ROOT, e));
  while (todo.length > 0) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = path.resolve(path.dirname(file), m[1] ?? m[2] ?? m[3]).replace(/\.js$/, '.ts');
      if (fs.existsSync(target)) todo.push(target);
    }
  }
  return [...seen].map((f) => path.relative(ROOT, f)).sort();
}

const byDir = (files) => {
  const counts = {};
  for (const f of files) {
    const dir = f.split('/').slice(0, 2).join('/');
    counts[dir] = (counts[dir] ?? 0) + 1;
  }
  return counts;
};

for (const [name, entries] of Object.entries(PATHS)) {
  const files = closure(entries);
  const parts = Object.entries(byDir(files)).map(([d, n]) => `${d} ${n}`);
  console.log(`${name}: ${files.length} files (${parts.join(', ')})`);
  if (process.argv.includes('--list')) for (const f of files) console.log(`  ${f}`);
}
