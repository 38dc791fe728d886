#!/usr/bin/env node
// The shape figures of docs/architecture.md, counted over src/ (the simulator, src/sim, left out):
// functions taking 5 or more parameters, parameters named `o`, types declared twice under one name,
// and, inside the use cases (everything outside src/cli), output decisions that belong to a printer:
// branches on `out.json` and text written with `out.print`/`out.info`/`out.status`.
// Usage: node bench/shape.mjs [--list]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const list = process.argv.includes('--list');

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return p.endsWith(`${path.sep}sim`) ? [] : sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const files = sourceFiles(path.join(ROOT, 'src'));
const longLists = [];
const oParams = [];
const typeNames = new Map();
const jsonBranches = [];
const textCalls = [];

for (const file of files) {
  const rel = path.relative(ROOT, file);
  const text = fs.readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const useCase = !rel.startsWith(`src${path.sep}cli${path.sep}`);
  const where = (node) => `${rel}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'parameters' in node) {
      if (node.parameters.length >= 5) longLists.push(`${where(node)} (${node.parameters.length})`);
      for (const p of node.parameters) if (ts.isIdentifier(p.name) && p.name.text === 'o') oParams.push(where(p));
    }
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && ts.isSourceFile(node.parent)) {
      const name = node.name.text;
      typeNames.set(name, [...(typeNames.get(name) ?? []), rel]);
    }
    if (useCase && ts.isPropertyAccessExpression(node) && node.name.text === 'json') {
      const target = node.expression.getText(sf);
      if (/(^|\.)out$/.test(target)) jsonBranches.push(where(node));
    }
    if (useCase && ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const { name, expression } = node.expression;
      if (['print', 'info', 'status'].includes(name.text) && /(^|\.)out$/.test(expression.getText(sf)))
        textCalls.push(where(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

// A type re-exported under its own name is one type; only a second declaration counts.
const twice = [...typeNames].filter(([, at]) => new Set(at).size > 1);
const rows = [
  ['functions with 5 or more parameters', longLists],
  ['parameters named `o`', oParams],
  ['type names declared in two files', twice.map(([n, at]) => `${n}: ${at.join(', ')}`)],
  ['`out.json` read in use cases', jsonBranches],
  ['text written by use cases (out.print/info/status)', textCalls],
];
for (const [label, hits] of rows) {
  console.log(`${label}: ${hits.length}`);
  if (list) for (const h of hits) console.log(`  ${h}`);
}
