/**
 * The agyctl.fleet modules' documentation as ansible-doc reads it: every
 * module documents its own options and the two every module takes
 * (agyctl, state_dir), which come from one doc fragment
 * (plugins/doc_fragments/agyctl.py), and ansible-doc says nothing else.
 *
 * @module-tag ansible
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';
import { which } from '../../helpers/ns-lab.js';

let dir: string;
beforeAll(() => {
  if (!which('ansible-doc'))
    throw new Error('ansible-doc is not installed; .ci/run installs it: apt-get install ansible-core');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-ansible-doc-'));
  fs.mkdirSync(path.join(dir, 'ansible_collections', 'agyctl'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'ansible'), path.join(dir, 'ansible_collections', 'agyctl', 'fleet'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const OWN: Record<string, string[]> = {
  agyctl_backup: ['busy_timeout', 'keep_daily', 'keep_last', 'keep_weekly', 'prometheus', 'to'],
  agyctl_check: ['live', 'prometheus', 'restart', 'server', 'timeout'],
  agyctl_settings: ['auth_type', 'location', 'project'],
};

describe('ansible-doc agyctl.fleet.*', () => {
  for (const [module, own] of Object.entries(OWN)) {
    it(`${module}: its own options plus agyctl and state_dir from the fragment`, async () => {
      const r = await execa('ansible-doc', ['--json', `agyctl.fleet.${module}`], {
        env: { ...process.env, ANSIBLE_COLLECTIONS_PATH: dir, ANSIBLE_NOCOLOR: '1' },
        reject: false,
        timeout: 60_000,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      const doc = JSON.parse(r.stdout)[`agyctl.fleet.${module}`].doc as {
        options: Record<string, { description: unknown; default?: unknown }>;
      };
      expect(Object.keys(doc.options).sort()).toEqual([...own, 'agyctl', 'state_dir'].sort());
      expect(doc.options.agyctl?.default).toBe('agyctl');
    });
  }
});

describe('ansible-doc -t role agyctl.fleet.agyctl', () => {
  it('documents every variable of the role defaults (meta/argument_specs.yml), and nothing else', async () => {
    const r = await execa('ansible-doc', ['-t', 'role', '--json', 'agyctl.fleet.agyctl'], {
      env: { ...process.env, ANSIBLE_COLLECTIONS_PATH: dir, ANSIBLE_NOCOLOR: '1' },
      reject: false,
      timeout: 60_000,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout)['agyctl.fleet.agyctl'] as {
      entry_points: { main: { short_description: string; options: Record<string, { description: unknown }> } };
    };
    const documented = Object.keys(doc.entry_points.main.options).sort();
    const defaults = fs.readFileSync(path.join(ROOT, 'ansible', 'roles', 'agyctl', 'defaults', 'main.yml'), 'utf8');
    const variables = [...defaults.matchAll(/^(agyctl_[a-z0-9_]+):/gm)].map((m) => m[1]!).sort();
    expect(documented).toEqual(variables);
    expect(doc.entry_points.main.short_description).toMatch(/Install agyctl/);
    for (const [name, o] of Object.entries(doc.entry_points.main.options)) expect(o.description, name).toBeTruthy();
  });
});
