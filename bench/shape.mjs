#!/usr/bin/env node
// The shape figures of docs/architecture.md, counted over src/ (the simulator, src/sim, left out):
// functions taking 5 or more parameters, parameters named `o`, types declared twice under one name,
// and, inside the use cases (everything outside src/cli), output decisions that belong to a printer:
// branches on `out.json` and text written with `out.print`/`out.info`/`out.status`; the
// `out.warn`/`out.verbose` sentences use cases still write (src/login apart from the rest, and how
// many of them hold literal text, a string or template, rather than text built elsewhere);
// parameters typed with an inline object type (`({ a, b }: { a: A; b: B })`, `(x: { ... })`),
// in src/backup and in all of src/; and the `Pick<`, `Extract<` and `Omit<` types.
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
const warnCalls = { login: [], elsewhere: [] };
const inlineParams = [];
const typeSlices = { Pick: [], Extract: [], Omit: [] };
const inDir = (rel, dir) => rel.startsWith(`src${path.sep}${dir}${path.sep}`);
// Literal text: a string or template literal, or a `+` of them, as the message argument.
const literalText = (arg) =>
  arg !== undefined &&
  (ts.isStringLiteral(arg) ||
    ts.isNoSubstitutionTemplateLiteral(arg) ||
    ts.isTemplateExpression(arg) ||
    (ts.isBinaryExpression(arg) &&
      arg.operatorToken.kind === ts.SyntaxKind.PlusToken &&
      (literalText(arg.left) || literalText(arg.right))));

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
      for (const p of node.parameters) if (p.type && ts.isTypeLiteralNode(p.type)) inlineParams.push(where(p));
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
      if (['warn', 'verbose'].includes(name.text) && /(^|\.)out$/.test(expression.getText(sf))) {
        const hit = `${where(node)}${literalText(node.arguments[0]) ? ' (literal)' : ''}`;
        warnCalls[inDir(rel, 'login') ? 'login' : 'elsewhere'].push(hit);
      }
    }
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text in typeSlices)
      typeSlices[node.typeName.text].push(where(node));
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
  ['warn/verbose calls in use cases, in src/login', warnCalls.login],
  ['warn/verbose calls in use cases, elsewhere', warnCalls.elsewhere],
  [
    'warn/verbose calls in use cases with literal text',
    [...warnCalls.login, ...warnCalls.elsewhere].filter((h) => h.endsWith('(literal)')),
  ],
  ['inline object-type parameters in src/backup', inlineParams.filter((h) => inDir(h, 'backup'))],
  ['inline object-type parameters in src/', inlineParams],
  ['Pick/Extract uses', [...typeSlices.Pick, ...typeSlices.Extract]],
  ['Pick/Extract uses in src/login', [...typeSlices.Pick, ...typeSlices.Extract].filter((h) => inDir(h, 'login'))],
  ['Omit uses', typeSlices.Omit],
];
for (const [label, hits] of rows) {
  console.log(`${label}: ${hits.length}`);
  if (list) for (const h of hits) console.log(`  ${h}`);
}
