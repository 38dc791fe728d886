#!/usr/bin/env node
// How many of agyctl's own source files every start loads, `agyctl --version`
// included: the static import closure of src/cli/main.ts. Imports the compiler
// erases (`import type`, or braces naming only types) and dynamic imports
// (loaded only where a command asks for them) are not followed.
// Usage: node bench/startup-closure.mjs [--list]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = 'src/cli/main.ts';
const STATIC = /^(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s+['"](\.[^'"]+)['"]|^import\s+['"](\.[^'"]+)['"]/gm;

/** An import the compiler keeps: not `import type`, and not braces that name only types. */
function kept(typeKeyword, clause) {
  if (typeKeyword) return false;
  const braces = clause.match(/^\{([^}]*)\}$/s);
  if (!braces) return true;
  const names = braces[1]
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length === 0 || names.some((n) => !n.startsWith('type '));
}

const seen = new Set();
const todo = [path.join(ROOT, ENTRY)];
let lines = 0;
while (todo.length > 0) {
  const file = todo.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  lines += text.split('\n').length - 1;
  for (const m of text.matchAll(STATIC)) {
    const spec = m[3] ?? m[4];
    if (m[3] !== undefined && !kept(m[1], m[2].trim())) continue;
    const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
    if (fs.existsSync(target)) todo.push(target);
  }
}
const files = [...seen].map((f) => path.relative(ROOT, f)).sort();
console.log(`${ENTRY} static start-up closure: ${files.length} files, ${lines} lines`);
if (process.argv.includes('--list')) for (const f of files) console.log(`  ${f}`);
