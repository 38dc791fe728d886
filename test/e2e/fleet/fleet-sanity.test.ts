/**
 * Ansible's own checks of the agyctl.fleet collection, with Debian's
 * packages and offline: `ansible-test sanity` (through
 * scripts/ansible-test-offline.py, which gives ansible-test's virtualenvs
 * Debian's linters instead of pip installs; docs/fleet.md) and `ansible-lint`.
 * Both want the collection at ansible_collections/agyctl/fleet/, so it is
 * copied to a temporary tree (ansible-test also writes there). Each run is
 * also made to fail once, on a copy with a planted fault, so a checker that
 * ran nothing cannot pass. Missing tools are a failure, not a skip.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';
import { which } from '../../helpers/ns-lab.js';

const SANITY_MS = 600_000;
const PYTHON = '/usr/bin/python3';
let dir: string;

beforeAll(() => {
  for (const tool of ['ansible-test', 'ansible-lint'])
    if (!which(tool)) throw new Error(`${tool} is not installed; .ci/run installs it (apt-get install ${tool})`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-ansible-sanity-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of ansible/ at <dir>/<name>/ansible_collections/agyctl/fleet, with `plant` applied to it. */
function collectionCopy(name: string, plant?: (root: string) => void): { tree: string; root: string; home: string } {
  const tree = path.join(dir, name);
  const root = path.join(tree, 'ansible_collections', 'agyctl', 'fleet');
  fs.cpSync(path.join(ROOT, 'ansible'), root, {
    recursive: true,
    filter: (src) => !/(__pycache__|\.pyc$|\.tar\.gz$)/.test(src),
  });
  plant?.(root);
  const home = path.join(tree, 'home');
  fs.mkdirSync(home);
  return { tree, root, home };
}

const envFor = (home: string, tree: string): NodeJS.ProcessEnv => ({
  PATH: `/usr/bin:/bin:/usr/sbin:/sbin`,
  HOME: home,
  LANG: 'C.UTF-8',
  NO_COLOR: '1',
  ANSIBLE_NOCOLOR: '1',
  ANSIBLE_COLLECTIONS_PATH: tree,
});

function sanity(name: string, plant?: (root: string) => void) {
  const { tree, root, home } = collectionCopy(name, plant);
  return execa(
    PYTHON,
    [
      path.join(ROOT, 'scripts', 'ansible-test-offline.py'),
      'sanity',
      '--python',
      '3.11',
      '--python-interpreter',
      PYTHON,
      '--local',
      '--color',
      'no',
      // Needs antsibull-changelog, which Debian 12 does not package (and pip cannot reach here): the fragments
      // are checked below instead.
      '--skip-test',
      'changelog',
    ],
    { cwd: root, env: envFor(home, tree), extendEnv: false, reject: false, timeout: SANITY_MS, stdin: 'ignore' },
  );
}

function lint(name: string, plant?: (root: string) => void) {
  const { tree, root, home } = collectionCopy(name, plant);
  return execa('ansible-lint', ['--offline', '--nocolor'], {
    cwd: root,
    env: envFor(home, tree),
    extendEnv: false,
    reject: false,
    timeout: SANITY_MS,
    stdin: 'ignore',
  });
}

describe('ansible-test sanity, offline with Debian linters', () => {
  it(
    'passes every sanity test, validate-modules, pep8, pylint and yamllint among them',
    async () => {
      const r = await sanity('clean');
      const out = `${r.stdout}\n${r.stderr}`;
      expect(r.exitCode, out).toBe(0);
      for (const test of ['validate-modules', 'pep8', 'pylint', 'yamllint', 'compile', 'import', 'ansible-doc'])
        expect(out).toMatch(new RegExp(`Running sanity test "${test}"`));
      expect(out).not.toMatch(/ERROR:|FATAL:/);
    },
    SANITY_MS,
  );

  it(
    'fails on a module without an author and a line over 160 characters',
    async () => {
      const r = await sanity('planted', (root) => {
        const file = path.join(root, 'plugins', 'modules', 'agyctl_check.py');
        const text = fs.readFileSync(file, 'utf8').replace(/^author: .*\n/m, '');
        fs.writeFileSync(
          file,
          text.replace('__metaclass__ = type\n', `__metaclass__ = type\n# ${'a long comment '.repeat(12)}\n`),
        );
      });
      const out = `${r.stdout}\n${r.stderr}`;
      expect(r.exitCode, out).not.toBe(0);
      expect(out).toMatch(
        /agyctl_check\.py:0:0: invalid-documentation: DOCUMENTATION\.author: required key not provided/,
      );
      expect(out).toMatch(/agyctl_check\.py:\d+:161: E501: line too long/);
    },
    SANITY_MS,
  );
});

describe('the changelog fragments', () => {
  it('are YAML using only the sections changelogs/config.yaml declares, each a string or a list of strings', async () => {
    const read = await execa(
      PYTHON,
      [
        '-c',
        'import glob, json, sys, yaml; print(json.dumps({"config": yaml.safe_load(open(sys.argv[1])), ' +
          '"fragments": {f: yaml.safe_load(open(f)) for f in sorted(glob.glob(sys.argv[2]))}}))',
        path.join(ROOT, 'ansible', 'changelogs', 'config.yaml'),
        path.join(ROOT, 'ansible', 'changelogs', 'fragments', '*.yml'),
      ],
      { reject: false },
    );
    expect(read.exitCode, read.stderr).toBe(0);
    const { config, fragments } = JSON.parse(read.stdout) as {
      config: { sections: string[][]; prelude_section_name: string; trivial_section_name: string };
      fragments: Record<string, Record<string, unknown>>;
    };
    const known = new Set([
      ...config.sections.map((s) => s[0]!),
      config.prelude_section_name,
      config.trivial_section_name,
    ]);
    expect(Object.keys(fragments).length).toBeGreaterThan(0);
    for (const [file, sections] of Object.entries(fragments))
      for (const [name, value] of Object.entries(sections)) {
        expect(known.has(name), `${file}: ${name}`).toBe(true);
        const entries = name === config.prelude_section_name ? [value] : (value as unknown[]);
        for (const e of entries) expect(typeof e, `${file}: ${name}`).toBe('string');
      }
  });
});

describe('ansible-lint', () => {
  it(
    'finds no violation in the collection',
    async () => {
      const r = await lint('lint-clean');
      const out = `${r.stdout}\n${r.stderr}`;
      expect(r.exitCode, out).toBe(0);
      expect(out).toMatch(/Passed with production profile: 0 failure\(s\), 0 warning\(s\)/);
    },
    SANITY_MS,
  );

  it(
    'reports a command task without changed_when',
    async () => {
      const r = await lint('lint-planted', (root) => {
        const file = path.join(root, 'roles', 'agyctl', 'tasks', 'install.yml');
        fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^ {2}changed_when: true\n/m, ''));
      });
      const out = `${r.stdout}\n${r.stderr}`;
      expect(r.exitCode, out).not.toBe(0);
      expect(out).toMatch(/no-changed-when: [^\n]*\nroles\/agyctl\/tasks\/install\.yml:\d+/);
    },
    SANITY_MS,
  );
});
