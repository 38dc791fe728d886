/**
 * The role's check of the release files on the controller, with and without
 * a signature: the role's verify-artifact tasks (what install.yml runs before
 * it copies anything) in a local play against release files made here and
 * SHA256SUMS signed with a throwaway key, as `npm run release -- --sign-key`
 * signs it (ssh-keygen -Y sign -n agyctl-release). With
 * agyctl_release_allowed_signers set, a good signature passes, and a changed
 * SHA256SUMS or a missing signature fails the host naming the fix; without it,
 * the play says that only the sums were checked. And the role's choice of
 * release file by the host's architecture (`uname -m`, or agyctl_arch).
 *
 * @module-tag ansible
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerDir, parseRecap } from '../../helpers/ansible-play.js';
import { which } from '../../helpers/ns-lab.js';

let dir: string;
let allowedSigners: string;
const DEB = 'agyctl_0.1.0_amd64.deb';

beforeAll(() => {
  if (!which('ansible-playbook'))
    throw new Error('ansible-playbook is not installed; .ci/run installs it: apt-get install ansible-core');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-signature-'));
  const key = path.join(dir, 'throwaway-key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'release@agyctl', '-f', key]);
  allowedSigners = path.join(dir, 'allowed_signers');
  fs.writeFileSync(
    allowedSigners,
    `release@agyctl namespaces="agyctl-release" ${fs.readFileSync(`${key}.pub`, 'utf8').trim()}\n`,
  );
  controllerDir(path.join(dir, 'controller'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A release directory with one file, its SHA256SUMS and (unless `sign` is false) SHA256SUMS.sig. */
function releaseDir(name: string, sign = true): string {
  const rel = path.join(dir, name);
  fs.mkdirSync(rel);
  fs.writeFileSync(path.join(rel, DEB), `stand-in for ${DEB}\n`);
  const sum = crypto
    .createHash('sha256')
    .update(fs.readFileSync(path.join(rel, DEB)))
    .digest('hex');
  fs.writeFileSync(path.join(rel, 'SHA256SUMS'), `${sum}  ${DEB}\n`);
  if (sign)
    execFileSync('ssh-keygen', [
      '-Y',
      'sign',
      '-q',
      '-n',
      'agyctl-release',
      '-f',
      path.join(dir, 'throwaway-key'),
      path.join(rel, 'SHA256SUMS'),
    ]);
  return rel;
}

async function verify(release: string, vars: Record<string, string> = {}): Promise<{ out: string; failed: number }> {
  return play('verify-artifact.yml', { agyctl_artifact: path.join(release, DEB), ...vars });
}

/** A local play of one of the role's task files, with `vars`; `bin` goes first on PATH (a stand-in `uname`). */
async function play(
  tasksFrom: string,
  vars: Record<string, string>,
  bin?: string,
): Promise<{ out: string; failed: number }> {
  const controller = path.join(dir, 'controller');
  const playbook = path.join(controller, `${tasksFrom}.play.yml`);
  fs.writeFileSync(
    playbook,
    [
      '- hosts: localhost',
      '  gather_facts: false',
      '  tasks:',
      '    - ansible.builtin.include_role:',
      '        name: agyctl.fleet.agyctl',
      `        tasks_from: ${tasksFrom}`,
      '    - ansible.builtin.debug:',
      '        msg: "release file: {{ agyctl_artifact_name | default(\'\') }}"',
      '',
    ].join('\n'),
  );
  const r = await execa(
    'ansible-playbook',
    [
      '-i',
      'localhost,',
      '-c',
      'local',
      playbook,
      '-e',
      JSON.stringify({ ansible_python_interpreter: '/usr/bin/python3', ...vars }),
    ],
    {
      cwd: controller,
      reject: false,
      timeout: 120_000,
      env: {
        PATH: [bin, process.env.PATH ?? ''].filter(Boolean).join(':'),
        HOME: controller,
        LANG: 'C.UTF-8',
        ANSIBLE_COLLECTIONS_PATH: path.join(controller, 'collections'),
        ANSIBLE_LOCAL_TEMP: path.join(controller, 'tmp'),
        ANSIBLE_NOCOLOR: '1',
        ANSIBLE_RETRY_FILES_ENABLED: '0',
      },
      extendEnv: false,
    },
  );
  const out = `${String(r.stdout)}\n${String(r.stderr)}`;
  return { out, failed: parseRecap(out).get('localhost')?.failed ?? -1 };
}

describe('the role checks SHA256SUMS.sig on the controller when agyctl_release_allowed_signers is set', () => {
  it('a good signature passes, and the play does not say it checked only the sums', async () => {
    const r = await verify(releaseDir('good'), { agyctl_release_allowed_signers: allowedSigners });
    expect(r.failed, r.out).toBe(0);
    expect(r.out).toMatch(/Verify SHA256SUMS's signature on the controller.*\n(ok|changed): \[localhost\]/);
    expect(r.out).not.toContain('checked against SHA256SUMS only');
  }, 150_000);

  it('a SHA256SUMS changed after signing fails the host, naming the signer and the fix', async () => {
    const rel = releaseDir('changed');
    fs.appendFileSync(path.join(rel, 'SHA256SUMS'), `${'0'.repeat(64)}  agyctl-0.1.0-linux-x64\n`);
    const r = await verify(rel, { agyctl_release_allowed_signers: allowedSigners });
    expect(r.failed, r.out).toBe(1);
    expect(r.out).toContain(`${rel}/SHA256SUMS is not signed by release@agyctl in ${allowedSigners}`);
    expect(r.out).toContain('nothing was copied');
  }, 150_000);

  it('a missing SHA256SUMS.sig fails the host', async () => {
    const rel = releaseDir('unsigned', false);
    const r = await verify(rel, { agyctl_release_allowed_signers: allowedSigners });
    expect(r.failed, r.out).toBe(1);
    expect(r.out).toContain(`${rel}/SHA256SUMS is not signed by release@agyctl`);
  }, 150_000);

  it('without allowed signers, the sums are checked and the play says the signature was not', async () => {
    const r = await verify(releaseDir('no-key', false));
    expect(r.failed, r.out).toBe(0);
    expect(r.out).toContain(
      `${DEB}: checked against SHA256SUMS only, not its signature; set agyctl_release_allowed_signers`,
    );
  }, 150_000);
});

/** A directory whose `uname -m` says `machine`, as that host's would. */
function unameSays(machine: string): string {
  const bin = fs.mkdtempSync(path.join(dir, 'uname-'));
  fs.writeFileSync(path.join(bin, 'uname'), `#!/bin/sh\n[ "$1" = -m ] && echo ${machine} && exit 0\nexit 1\n`, {
    mode: 0o755,
  });
  return bin;
}

describe("the role picks the .deb or the executable built for the host's architecture", () => {
  const cases: [string, string, string][] = [
    ['x86_64', 'deb', 'agyctl_0.1.0_amd64.deb'],
    ['x86_64', 'binary', 'agyctl-0.1.0-linux-x64'],
    ['aarch64', 'deb', 'agyctl_0.1.0_arm64.deb'],
    ['aarch64', 'binary', 'agyctl-0.1.0-linux-arm64'],
  ];
  it.each(cases)(
    'uname -m %s, agyctl_install=%s: %s',
    async (machine, install, file) => {
      const r = await play('release-file.yml', { agyctl_install: install }, unameSays(machine));
      expect(r.failed, r.out).toBe(0);
      expect(r.out).toContain(`release file: ${file}`);
    },
    150_000,
  );

  it('agyctl_arch overrides what the host says', async () => {
    const r = await play('release-file.yml', { agyctl_install: 'deb', agyctl_arch: 'arm64' }, unameSays('x86_64'));
    expect(r.failed, r.out).toBe(0);
    expect(r.out).toContain('release file: agyctl_0.1.0_arm64.deb');
  }, 150_000);

  it('an architecture agyctl is not built for fails the host, naming agyctl_install=tarball', async () => {
    const r = await play('release-file.yml', { agyctl_install: 'binary' }, unameSays('riscv64'));
    expect(r.failed, r.out).toBe(1);
    expect(r.out).toContain("this host's architecture is riscv64");
    expect(r.out).toContain('use agyctl_install=tarball');
  }, 150_000);

  it('tarball names the npm package whatever the architecture', async () => {
    const r = await play('release-file.yml', { agyctl_install: 'tarball' }, unameSays('riscv64'));
    expect(r.failed, r.out).toBe(0);
    expect(r.out).toContain('release file: agyctl-0.1.0.tgz');
  }, 150_000);
});
