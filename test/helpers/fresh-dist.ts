/**
 * The e2e project's global setup: the tests run dist/, so a dist/ older than
 * src/ would test code that no longer exists. Every src/**\/*.ts must have its
 * dist/**\/*.js, written after the source was last changed; otherwise the run
 * stops before any test, naming the file and the fix.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { READABLE_APP_PREFIX } from './readable-app.js';
import { ROOT } from './root.js';

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The first source whose build output is missing or older than it, as a sentence; undefined when dist/ is current. */
export function staleBuild(root: string = ROOT): string | undefined {
  const src = path.join(root, 'src');
  for (const file of sources(src)) {
    const rel = path.relative(src, file);
    const out = path.join(root, 'dist', rel.replace(/\.ts$/, '.js'));
    if (!fs.existsSync(out)) return `dist/${path.relative(path.join(root, 'dist'), out)} is missing`;
    if (fs.statSync(out).mtimeMs < fs.statSync(file).mtimeMs) return `src/${rel} changed after dist/ was built`;
  }
  return undefined;
}

export function assertFreshBuild(root: string = ROOT): void {
  const stale = staleBuild(root);
  if (stale)
    throw new Error(
      `The e2e tests run dist/, which is out of date: ${stale}. Run \`npm run build\` first (\`npm run test:e2e\` builds, then tests).`,
    );
}

/** The run's readable copies of agyctl (readable-app.ts) go with it. */
function removeReadableCopies(): void {
  for (const name of fs.readdirSync(os.tmpdir()))
    if (name.startsWith(READABLE_APP_PREFIX)) fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
}

export default function setup(): () => void {
  assertFreshBuild();
  return removeReadableCopies;
}
