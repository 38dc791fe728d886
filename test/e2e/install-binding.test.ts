/**
 * Where the install is described (README, docs/install.md), the reader is told
 * that `agyctl version` answers whether the SQLite binding exists after
 * `npm install -g` (npm 11 warns about install scripts whether or not it ran
 * them). And it does: an installed package whose binding was never built (its
 * install script did not run) makes `agyctl version` exit 1 naming the fix,
 * not "built for another Node".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { copyApp } from '../helpers/release-artifacts.js';

let app: string;
beforeAll(async () => {
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-unbuilt-'));
  await copyApp(app);
}, 60_000);
afterAll(() => fs.rmSync(app, { recursive: true, force: true }));

const version = (dir: string) =>
  execa(process.execPath, [path.join(dir, 'bin', 'agyctl.js'), 'version'], {
    env: { PATH: '/usr/bin:/bin', HOME: app, LANG: 'C.UTF-8', NO_COLOR: '1' },
    extendEnv: false,
    reject: false,
  });

describe('agyctl version answers whether npm built the SQLite binding', () => {
  it.each(['README.md', 'docs/install.md'])('%s says so next to npm install -g', (doc) => {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    const at = text.indexOf('npm install -g --allow-scripts=better-sqlite3');
    expect(at).toBeGreaterThan(-1);
    const near = text.slice(at, at + 1200).replace(/\s+/g, ' ');
    expect(near).toMatch(/npm 11 (may print a )?warn/);
    expect(near).toMatch(/`agyctl version` (tells|does)[^.]*binding/);
  });

  it('with the binding: its path; without it: exit 1 and the fix for a script that did not run', async () => {
    const built = await version(app);
    expect(built.exitCode, built.stderr).toBe(0);
    expect(built.stdout).toMatch(/^binding \/.*better_sqlite3\.node$/m);
    fs.rmSync(path.join(app, 'node_modules', 'better-sqlite3', 'build'), { recursive: true, force: true });
    const unbuilt = await version(app);
    expect(unbuilt.exitCode).toBe(1);
    expect(unbuilt.stderr).toContain('npm did not build better-sqlite3');
    expect(unbuilt.stderr).toContain('npm rebuild -g agyctl');
    expect(unbuilt.stderr).not.toMatch(/another Node|at .*\.js:\d+/);
  });
});
