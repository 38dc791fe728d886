/**
 * The `release` project's global setup: the release files in release/, built
 * once per run (`node scripts/release.mjs --fast`: every release file, the
 * .deb compressed less) unless release/ already holds an executable, a .deb
 * and SHA256SUMS newer than everything the release script reads (then
 * a run reuses them, e.g. after `npm run release`, or the previous `npm test`).
 * That is src/ (which it bundles itself), not dist/: `npm test` rewrites
 * dist/ on every run, and a release rebuilt from the same sources is the same.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEB, EXE, RELEASE_DIR, ROOT } from './cli.js';
import { assertFreshBuild } from './fresh-dist.js';

function newest(dir: string): number {
  return fs.readdirSync(dir, { withFileTypes: true }).reduce((latest, e) => {
    const p = path.join(dir, e.name);
    return Math.max(latest, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }, 0);
}

/** What scripts/release.mjs builds the release files from (and dist/, for the npm package: see above). */
const RELEASE_INPUTS = [
  'src',
  'docs',
  'README.md',
  'LICENSE',
  'package.json',
  'package-lock.json',
  'ansible',
  path.join('scripts', 'release.mjs'),
];

/** Why release/ must be rebuilt, or undefined when it is current. */
export function staleRelease(): string | undefined {
  const files = [EXE, DEB, path.join(RELEASE_DIR, 'SHA256SUMS')];
  for (const file of files) if (!fs.existsSync(file)) return `${path.relative(ROOT, file)} is missing`;
  const built = Math.min(...files.map((f) => fs.statSync(f).mtimeMs));
  const inputs = Math.max(
    ...RELEASE_INPUTS.map((rel) => {
      const p = path.join(ROOT, rel);
      return fs.statSync(p).isDirectory() ? newest(p) : fs.statSync(p).mtimeMs;
    }),
  );
  return built < inputs ? `${RELEASE_INPUTS.join(', ')} changed after release/ was built` : undefined;
}

export default function setup(): void {
  assertFreshBuild();
  const stale = staleRelease();
  if (!stale) return;
  process.stderr.write(`release project: building release/ (${stale})\n`);
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'release.mjs'), '--fast'], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 15 * 60_000,
  });
}
