#!/usr/bin/env node
// How many source files a reader follows from a command's entry to its result:
// the import closure of the entry files (type imports too), by directory.
// `agyctl backup`: from its command file (register.ts, what argv reaches), through
// its handler to the run. A dynamic import is a branch loaded only where a flag, a
// subcommand or a case asks for it (--prove, --dry-run, `backup verify`, root on a
// user's tree ...): followed only when a plain run loads it (`follows`), and the
// branches left out are counted. The figure of the entry used before
// (src/backup/run-backup.ts alone, every import followed) is printed too, to compare.
// `agyctl login`: the login command and the supervisor it starts, the two
// processes of one login, every dynamic import followed.
// Usage: node bench/path-files.mjs [--list]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PATHS = {
  backup: {
    entries: ['src/cli/commands/backup/register.ts'],
    follows: ['src/profiles/guard.ts', 'src/cli/commands/backup/handler.ts', 'src/backup/run-backup.ts'],
  },
  'backup (entry before: run-backup.ts)': { entries: ['src/backup/run-backup.ts'], follows: 'all' },
  login: {
    entries: ['src/cli/commands/login/handler.ts', 'src/cli/commands/login/supervisor-handler.ts'],
    follows: 'all',
  },
};
const IMPORT =
  /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|^import\s+['"](\.[^'"]+)['"]/gm;

function closure({ entries, follows }) {
  const seen = new Set();
  const branches = new Set();
  const todo = entries.map((e) => path.join(ROOT, e));
  while (todo.length > 0) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = path.resolve(path.dirname(file), m[1] ?? m[2] ?? m[3]).replace(/\.js$/, '.ts');
      if (!fs.existsSync(target)) continue;
      const dynamic = m[2] !== undefined;
      if (dynamic && follows !== 'all' && !follows.includes(path.relative(ROOT, target))) branches.add(target);
      else todo.push(target);
    }
  }
  for (const f of seen) branches.delete(f);
  return { files: [...seen].map((f) => path.relative(ROOT, f)).sort(), branches: branches.size };
}

const byDir = (files) => {
  const counts = {};
  for (const f of files) {
    const dir = f.split('/').slice(0, 2).join('/');
    counts[dir] = (counts[dir] ?? 0) + 1;
  }
  return counts;
};

for (const [name, route] of Object.entries(PATHS)) {
  const { files, branches } = closure(route);
  const parts = Object.entries(byDir(files)).map(([d, n]) => `${d} ${n}`);
  const left = branches > 0 ? `; ${branches} dynamic imports a plain run does not load left out` : '';
  console.log(`${name}: ${files.length} files (${parts.join(', ')})${left}`);
  if (process.argv.includes('--list')) for (const f of files) console.log(`  ${f}`);
}
