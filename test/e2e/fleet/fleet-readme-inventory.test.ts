/**
 * ansible/README.md's inventory, as pasted, provisions a box that has only
 * what the README says a box needs: a stock Debian 12 (systemd, no Node)
 * with sshd, python3, sudo for the service user `agy`, and agy's key. The
 * inventory block is read from the README; only the example addresses are
 * replaced by the lab host's, and the lab's ssh key is added in a section
 * of its own. Ansible logs in as agy and becomes root: `site` installs the
 * .deb and writes units that run as agy (not root), and `health` checks
 * agy's state dir (not root's).
 *
 * @module-tag root
 * @module-tag ansible
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ansiblePlay, controllerDir, PLAYBOOKS } from '../../helpers/ansible-play.js';
import { ROOT } from '../../helpers/cli.js';
import { requireFleetLab, useFleetLab } from '../../helpers/fleet-lab.js';
import { which } from '../../helpers/ns-lab.js';
import { type ReleaseFiles, releaseFiles } from '../../helpers/release-artifacts.js';
import { bootSystemdBox, debianSystemdTree, type SystemdBox } from '../../helpers/systemd-box.js';

const fx = useFleetLab({ hosts: 1 });
const TEST_MS = 900_000;
const USER = 'agy';

let box: SystemdBox | undefined;
let release: ReleaseFiles;

/** The ```ini block of the README's Inventory section, as a user copies it. */
function readmeInventory(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'ansible', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Inventory'));
  const m = /```ini\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('ansible/README.md has no ```ini block under ## Inventory');
  return m[1]!;
}

async function must(argv: string[]): Promise<string> {
  const r = await box!.exec(argv);
  if (r.exitCode !== 0) throw new Error(`${argv.join(' ')} in the box: exit ${r.exitCode}: ${String(r.all)}`);
  return String(r.stdout);
}

beforeAll(async () => {
  if (!which('ansible-playbook'))
    throw new Error('ansible-playbook is not installed; .ci/run installs it: apt-get install ansible-core');
  const lab = fx.result()?.lab;
  if (!lab) return;
  const { tree, unavailable } = await debianSystemdTree();
  if (!tree) throw new Error(`no Debian box for the README's inventory: ${unavailable}`);
  release = await releaseFiles(path.join(lab.dir, 'artifacts'));
  const [h] = lab.hosts;
  await h!.stopSshd();
  box = await bootSystemdBox({
    tree,
    netns: h!.ns,
    name: `agyctl-readme-${process.pid}`,
    dir: path.join(lab.dir, 'box'),
  });
  // What the README asks of a box: the service user with the controller's key, and sudo for it.
  await must(['useradd', '--create-home', '--shell', '/bin/bash', USER]);
  const ssh = `${box.root}/home/${USER}/.ssh`;
  fs.mkdirSync(ssh, { mode: 0o700 });
  fs.copyFileSync(`${lab.clientKey}.pub`, path.join(ssh, 'authorized_keys'));
  await must(['chown', '-R', `${USER}:${USER}`, `/home/${USER}/.ssh`]);
  fs.writeFileSync(`${box.root}/etc/sudoers.d/${USER}`, `${USER} ALL=(ALL) NOPASSWD:ALL\n`, { mode: 0o440 });
}, 1_500_000);

afterAll(async () => {
  await box?.stop();
}, 120_000);

describe("ansible/README.md's inventory", () => {
  it('keeps no comment after a value (Ansible would take it as part of the value)', () => {
    const text = readmeInventory();
    for (const line of text.split('\n'))
      if (!line.startsWith('#') && !line.startsWith('[')) expect(line, line).not.toMatch(/\s#/);
    expect(text).toMatch(/^ansible_become=true$/m);
    expect(text).toMatch(/^agyctl_user=agy$/m);
  });

  it(
    'provisions a box as pasted: agy logs in and becomes root, the units run as agy, health checks agy’s state dir',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const [h] = lab.hosts;
      const dir = controllerDir(path.join(lab.dir, 'controller'));
      // agyctl_artifact_dir=release is relative to where ansible-playbook runs: the controller's directory.
      fs.symlinkSync(release.dir, path.join(dir, 'release'));
      const pasted = readmeInventory();
      const hosts = pasted.match(/^build-0\d ansible_host=\S+$/gm) ?? [];
      expect(hosts).toHaveLength(2);
      const text = pasted.replace(hosts[0]!, `build-01 ansible_host=${h!.addr}`).replace(`${hosts[1]!}\n`, '');
      const inventory = path.join(dir, 'inventory.ini');
      fs.writeFileSync(
        inventory,
        [
          text,
          '[agy:vars]',
          `ansible_ssh_private_key_file=${lab.clientKey}`,
          "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR'",
          '',
        ].join('\n'),
      );
      const options = { run: lab.run, ns: lab.laptop, dir, inventory, timeoutMs: 600_000 };

      const site = await ansiblePlay(options, path.join(PLAYBOOKS, 'site.yml'));
      expect(site.code, site.out).toBe(0);
      expect(site.recap.get('build-01'), site.out).toMatchObject({ failed: 0, unreachable: 0 });
      expect(await must(['dpkg-query', '-W', '-f', '${Version}', 'agyctl'])).toBe(release.version);
      const unit = fs.readFileSync(`${box!.root}/etc/systemd/system/agyctl-check.service`, 'utf8');
      expect(unit).toMatch(/^User=agy$/m);
      expect(await must(['systemctl', 'is-enabled', 'agyctl-check.timer', 'agyctl-backup.timer'])).toBe(
        'enabled\nenabled',
      );
      // agyctl_user left to its default is the user Ansible logs in as (agy), not root, although it becomes root.
      const byDefault = await ansiblePlay(options, path.join(PLAYBOOKS, 'site.yml'), ['-e', '{"agyctl_user": ""}']);
      expect(byDefault.code, byDefault.out).toBe(0);
      expect(fs.readFileSync(`${box!.root}/etc/systemd/system/agyctl-check.service`, 'utf8')).toMatch(/^User=agy$/m);
      const settings = `${box!.root}/home/${USER}/.gemini/antigravity-acp/settings.json`;
      expect(JSON.parse(fs.readFileSync(settings, 'utf8'))).toMatchObject({ auth: { type: 'oauth-personal' } });

      // The server agyctl looks after (health's static check finds it on PATH; it is not started).
      fs.writeFileSync(`${box!.root}/usr/local/bin/agy_acp_server`, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      // Signed in as agy only: root has no state dir, so a health check of root's would fail.
      const state = `${box!.root}/home/${USER}/.gemini/antigravity-acp`;
      fs.writeFileSync(
        path.join(state, 'acp_token.json'),
        JSON.stringify({ access_token: 'a', refresh_token: 'r', expiry_date: Date.now() + 3_600_000 }),
        { mode: 0o600 },
      );
      await must(['chown', `${USER}:${USER}`, `/home/${USER}/.gemini/antigravity-acp/acp_token.json`]);
      const health = await ansiblePlay(options, path.join(PLAYBOOKS, 'health.yml'));
      expect(health.code, health.out).toBe(0);
      expect(health.out).toMatch(/build-01 +ok +0 {2}/);
    },
    TEST_MS,
  );
});
