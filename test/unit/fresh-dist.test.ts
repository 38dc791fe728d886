/** The e2e project's guard against testing a dist/ that is older than src/ (test/helpers/fresh-dist.ts). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertFreshBuild, staleBuild } from '../helpers/fresh-dist.js';

const roots: string[] = [];
afterEach(() => {
  for (const d of roots.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function project(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-fresh-dist-'));
  roots.push(root);
  fs.mkdirSync(path.join(root, 'src', 'cli'), { recursive: true });
  fs.mkdirSync(path.join(root, 'dist', 'cli'), { recursive: true });
  fs.writeFileSync(path.join(root, 'src', 'cli', 'main.ts'), '');
  fs.writeFileSync(path.join(root, 'dist', 'cli', 'main.js'), '');
  return root;
}

const setMtime = (file: string, seconds: number): void => fs.utimesSync(file, seconds, seconds);

describe('e2e refuses a stale dist/', () => {
  it('a build newer than every source passes', () => {
    const root = project();
    setMtime(path.join(root, 'src', 'cli', 'main.ts'), 1000);
    setMtime(path.join(root, 'dist', 'cli', 'main.js'), 2000);
    expect(staleBuild(root)).toBeUndefined();
  });

  it('a source changed after the build is named', () => {
    const root = project();
    setMtime(path.join(root, 'src', 'cli', 'main.ts'), 3000);
    setMtime(path.join(root, 'dist', 'cli', 'main.js'), 2000);
    expect(staleBuild(root)).toBe('src/cli/main.ts changed after dist/ was built');
  });

  it('a source with no build output is named', () => {
    const root = project();
    fs.writeFileSync(path.join(root, 'src', 'cli', 'new.ts'), '');
    expect(staleBuild(root)).toBe('dist/cli/new.js is missing');
  });

  it('the e2e run stops with the fix', () => {
    const root = project();
    setMtime(path.join(root, 'src', 'cli', 'main.ts'), 3000);
    setMtime(path.join(root, 'dist', 'cli', 'main.js'), 2000);
    expect(() => assertFreshBuild(root)).toThrow(
      'The e2e tests run dist/, which is out of date: src/cli/main.ts changed after dist/ was built. Run `npm run build` first',
    );
  });
});
