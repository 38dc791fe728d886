/**
 * The README's "Try it by hand" steps, run as written with bash (the
 * `npm ci && npm run build` line aside: the e2e project already has a fresh
 * dist/), in a checkout's root with a clean environment: each step must
 * exit 0, and the login must end proven.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

function steps(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Try it by hand'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no sh block under "## Try it by hand"');
  return block.replace(/^npm ci && npm run build\n/m, '');
}

describe('README: try it by hand', () => {
  it('the steps work as written', async () => {
    const script = steps();
    expect(script).toContain('agyctl login finish');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-readme-'));
    homes.push(tmp);
    // mktemp in the steps makes the throwaway HOME under TMPDIR: keep it where the test can remove it.
    const r = await execa('bash', ['-euo', 'pipefail', '-c', `${script}\necho "HOME=$HOME"`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmp, LANG: 'C.UTF-8' },
      extendEnv: false,
      reject: false,
      timeout: 120_000,
    });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('proven in a fresh server');
    expect(r.stdout).toMatch(/status: ok/);
    const home = /^HOME=(.*)$/m.exec(r.stdout)?.[1];
    expect(home?.startsWith(tmp)).toBe(true);
    // Leave no pending login or supervisor behind.
    await execa('bash', ['-c', 'agyctl login cancel || true'], {
      cwd: ROOT,
      env: {
        PATH: `${home}/bin:${process.env.PATH}`,
        HOME: home,
        AGYCTL_SERVER: path.join(ROOT, 'scripts', 'agy-acp-sim'),
      },
      extendEnv: false,
      reject: false,
    });
  });
});
