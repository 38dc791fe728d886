/**
 * docs/fleet.md's air-gapped path, run as written on a controller that has
 * only the release files (release/, signed with the tests' throwaway key),
 * an allowed_signers file and an inventory.ini beside them: no checkout, no
 * collection installed. The signature and sums are checked, the collection
 * is installed from the release's own tarball (into the controller's HOME),
 * and ansible-playbook finds `agyctl.fleet.site` and the inventory's host.
 * The host is a closed port, so the play ends there (UNREACHABLE); what the
 * role then does on a real box is test/e2e/fleet/fleet-debian-systemd.test.ts.
 *
 * @module-tag ansible
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE_DIR, ROOT } from '../helpers/cli.js';
import { which } from '../helpers/ns-lab.js';
import { TEST_SIGN_KEY } from '../helpers/release-build.js';

let controller: string;
beforeAll(() => {
  for (const tool of ['ansible-playbook', 'ansible-galaxy'])
    if (!which(tool)) throw new Error(`${tool} is not installed; .ci/run installs it: apt-get install ansible-core`);
  controller = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-air-gapped-'));
  fs.mkdirSync(path.join(controller, 'release'));
  for (const file of fs.readdirSync(RELEASE_DIR))
    fs.symlinkSync(path.join(RELEASE_DIR, file), path.join(controller, 'release', file));
  fs.writeFileSync(
    path.join(controller, 'allowed_signers'),
    `release@agyctl namespaces="agyctl-release" ${fs.readFileSync(`${TEST_SIGN_KEY}.pub`, 'utf8').trim()}\n`,
  );
  fs.writeFileSync(
    path.join(controller, 'inventory.ini'),
    '[agy]\nbox-1 ansible_host=127.0.0.1 ansible_port=9 ansible_user=agy\n',
  );
});
afterAll(() => fs.rmSync(controller, { recursive: true, force: true }));

function airGappedSteps(): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'fleet.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### The air-gapped path'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("docs/fleet.md's air-gapped path has no sh block");
  return block;
}

describe("docs/fleet.md's air-gapped path, as written", () => {
  it('verifies the files, installs the collection from the release, and plays site against the inventory', async () => {
    const r = await execa('sh', ['-euc', airGappedSteps()], {
      cwd: controller,
      reject: false,
      timeout: 240_000,
      all: true,
      extendEnv: false,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: controller,
        LANG: 'C.UTF-8',
        ANSIBLE_NOCOLOR: '1',
        ANSIBLE_LOCAL_TEMP: path.join(controller, 'tmp'),
        ANSIBLE_SSH_ARGS: '-o ConnectTimeout=5 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null',
      },
    });
    const out = String(r.all);
    expect(out).toContain('Good "agyctl-release" signature for release@agyctl');
    expect(out).toMatch(/agyctl_0\.1\.0_amd64\.deb: OK/);
    expect(out).toMatch(/agyctl\.fleet:0\.1\.0 was installed successfully/);
    expect(
      fs.existsSync(path.join(controller, '.ansible', 'collections', 'ansible_collections', 'agyctl', 'fleet')),
    ).toBe(true);
    expect(out).not.toMatch(/provided hosts list is empty|Could not match supplied host pattern|couldn't resolve/i);
    expect(out).toContain('PLAY [Provision agyctl]');
    expect(out).toMatch(/box-1\s+: ok=\d+\s+changed=\d+\s+unreachable=1/);
    expect(r.exitCode, out).toBe(4);
  }, 300_000);
});
