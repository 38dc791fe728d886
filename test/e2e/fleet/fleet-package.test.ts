/**
 * What ships: the npm package a release is (`npm pack`, as the role's
 * tarball install and the README use it) and the Ansible collection
 * (`ansible-galaxy collection build`). A clean clone has no dist/ (it is
 * gitignored), so the package is packed from a copy of the tracked files:
 * prepack must build it, and the tarball must carry the licence and no
 * source maps that point at src/*.ts, which is not shipped.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';
import { which } from '../../helpers/ns-lab.js';

const APACHE = '/usr/share/common-licenses/Apache-2.0';
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-package-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The tracked files of the checkout (what a clone has), with node_modules linked in for the build. */
function cleanClone(): string {
  const clone = path.join(dir, 'clone');
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of tracked) {
    if (!fs.existsSync(path.join(ROOT, f))) continue;
    fs.mkdirSync(path.dirname(path.join(clone, f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(clone, f));
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'));
  return clone;
}

describe('the npm package', () => {
  it('packs from a clean clone: built by prepack, with LICENSE and repository, and no dangling source maps', async () => {
    const clone = cleanClone();
    expect(fs.existsSync(path.join(clone, 'dist'))).toBe(false);
    const r = await execa('npm', ['pack', '--dry-run', '--json'], {
      cwd: clone,
      reject: false,
      timeout: 240_000,
      stdin: 'ignore',
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const json = r.stdout.slice(r.stdout.indexOf('['));
    const [pack] = JSON.parse(json) as Array<{ files: Array<{ path: string }>; size: number }>;
    const files = pack!.files.map((f) => f.path);
    for (const f of [
      'LICENSE',
      'README.md',
      'package.json',
      'bin/agyctl.js',
      'dist/cli/main.js',
      'scripts/agy-acp-sim',
    ])
      expect(files, f).toContain(f);
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('src/'))).toEqual([]);
    // No shipped script names a map that is not there.
    for (const f of files.filter((x) => x.endsWith('.js')))
      expect(fs.readFileSync(path.join(clone, f), 'utf8'), f).not.toMatch(/sourceMappingURL=/);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      license: string;
      repository?: { url?: string };
      scripts: Record<string, string>;
    };
    expect(pkg.license).toBe('Apache-2.0');
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\/github\.com\/agyctl\/agyctl\.git$/);
    expect(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')).toBe(fs.readFileSync(APACHE, 'utf8'));
  }, 300_000);
});

describe('the Ansible collection', () => {
  it('builds with its LICENSE, the alerting rules and the role argument specs', async () => {
    if (!which('ansible-galaxy'))
      throw new Error('ansible-galaxy is not installed; .ci/run installs it: apt-get install ansible-core');
    expect(fs.readFileSync(path.join(ROOT, 'ansible', 'LICENSE'), 'utf8')).toBe(fs.readFileSync(APACHE, 'utf8'));
    const out = path.join(dir, 'galaxy');
    const r = await execa('ansible-galaxy', ['collection', 'build', path.join(ROOT, 'ansible'), '--output-path', out], {
      reject: false,
      timeout: 120_000,
      env: { ...process.env, HOME: dir, ANSIBLE_NOCOLOR: '1' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const tarball = path.join(out, 'agyctl-fleet-0.1.0.tar.gz');
    const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    for (const f of [
      'LICENSE',
      'prometheus/agyctl-alerts.yml',
      'playbooks/server.yml',
      'roles/agyctl/meta/argument_specs.yml',
      'roles/agyctl/templates/hardening.j2',
    ])
      expect(listing, f).toContain(f);
    expect(listing.filter((f) => /__pycache__|\.pyc$/.test(f))).toEqual([]);
  }, 180_000);
});
