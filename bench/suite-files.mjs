// bench/suite-files: where a whole-suite run spent its time, from vitest's JSON report:
// per project (files, tests, the sum of the files' durations, first start to last end)
// and the slowest files. With a second report, each figure is given before -> after.
// The sum against the span shows how many files ran at once; the wall time of the
// run also holds vitest's start-up and the release build of its global setup.
//
//   npm test -- --reporter=default --reporter=json --outputFile.json=/tmp/after.json
//   node bench/suite-files.mjs /tmp/after.json                  # one run
//   node bench/suite-files.mjs /tmp/before.json /tmp/after.json # before -> after
// SUITE_TOP (default 15) sets how many files are listed.
import fs from 'node:fs';

const [first, second] = process.argv.slice(2);
if (!first) {
  process.stderr.write('usage: node bench/suite-files.mjs <vitest json report> [<a later report>]\n');
  process.exit(2);
}
const top = Number(process.env.SUITE_TOP ?? 15);

/**
 * The report's files as { project, file, start, end, tests }. vitest's JSON does not name the project: it is the
 * file's folder, and an e2e file reported twice ran the second time (later) in the release project.
 */
function filesOf(report) {
  const sorted = [...report.testResults].sort((a, b) => a.startTime - b.startTime);
  const seen = new Set();
  return sorted.map((t) => {
    const file = t.name.replace(/^.*?\/test\//, 'test/');
    const folder = file.split('/')[1];
    const project = folder === 'e2e' && seen.has(file) ? 'release' : folder;
    seen.add(file);
    return { project, file, start: t.startTime, end: t.endTime, tests: t.assertionResults.length };
  });
}

function summary(report) {
  const files = filesOf(report);
  const projects = new Map();
  for (const f of files) {
    const p = projects.get(f.project) ?? { files: 0, tests: 0, sum: 0, start: Infinity, end: 0 };
    p.files += 1;
    p.tests += f.tests;
    p.sum += (f.end - f.start) / 1000;
    p.start = Math.min(p.start, f.start);
    p.end = Math.max(p.end, f.end);
    projects.set(f.project, p);
  }
  const wall = (Math.max(...files.map((f) => f.end)) - report.startTime) / 1000;
  const byFile = new Map(files.map((f) => [`${f.project}:${f.file}`, (f.end - f.start) / 1000]));
  return { projects, wall, byFile, tests: report.numTotalTests, failed: report.numFailedTests };
}

const s = (n) => (n === undefined ? '-' : `${n.toFixed(1)} s`);
const pair = (a, b) => (b === undefined ? s(a) : `${s(a)} -> ${s(b)}`);

const before = summary(JSON.parse(fs.readFileSync(first, 'utf8')));
const after = second ? summary(JSON.parse(fs.readFileSync(second, 'utf8'))) : undefined;
const last = after ?? before;

console.log(
  `vitest: ${last.tests} tests, ${last.failed} failed; wall ${pair(before.wall, after?.wall)} (start of the run to the last file's end)`,
);
for (const [name, p] of last.projects) {
  const b = after ? before.projects.get(name) : undefined;
  const span = (q) => (q ? (q.end - q.start) / 1000 : undefined);
  console.log(
    `  ${name.padEnd(8)} ${String(p.files).padStart(3)} files ${String(p.tests).padStart(5)} tests   sum of files ${pair(after ? b?.sum : p.sum, after ? p.sum : undefined).padEnd(20)} span ${pair(after ? span(b) : span(p), after ? span(p) : undefined)}`,
  );
}
console.log(`slowest files${after ? ' (after; before in brackets)' : ''}:`);
for (const [key, d] of [...last.byFile].sort((x, y) => y[1] - x[1]).slice(0, top))
  console.log(`  ${s(d).padStart(8)}${after ? ` (${s(before.byFile.get(key))})`.padEnd(12) : ''}  ${key}`);
