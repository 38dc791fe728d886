/**
 * Every command docs/fleet.md and ansible/README.md tell a user to run, run
 * as written on a controller (a throwaway HOME and working directory with
 * the README's inventory.ini beside it, its addresses this machine's): the collection built from the checkout and
 * installed (or linked, the README's other way), then the playbooks by
 * their collection names, `agyctl connect` in each documented form, and the
 * server roll-out with a `sha256sum` of its archive. The inventory's hosts
 * are a closed port, so each play and each connect ends at the host,
 * unreachable (exit 4): what the roles then do on a real box is
 * fleet-readme-inventory.test.ts and fleet-debian-systemd.test.ts.
 *
 * @module-tag ansible
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, ROOT } from '../../helpers/cli.js';
import { which } from '../../helpers/ns-lab.js';

const ARCHIVE = 'antigravity-acp-1.3.0-linux-x86_64.zip';
let controller: string;

/** The commands of every ```sh block in `doc` (a `\` continuation joined, comments dropped), in order. */
function docCommands(doc: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.replace(/\\\n\s*/g, '').split('\n'))
    .map((l) => l.replace(/(^|\s+)#.*$/, '').trim())
    .filter(Boolean);
}

/** ansible/README.md's inventory as pasted, its example addresses made this machine (a closed port, below). */
function readmeInventory(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'ansible', 'README.md'), 'utf8');
  const block = /```ini\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Inventory')))?.[1];
  if (!block) throw new Error('ansible/README.md has no ```ini block under ## Inventory');
  return block.replace(/ansible_host=\S+/g, 'ansible_host=127.0.0.1');
}

/** A fresh controller: the checkout's ansible/ beside an inventory of closed ports, agyctl on PATH. */
function makeController(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-fleet-docs-'));
  fs.symlinkSync(path.join(ROOT, 'ansible'), path.join(dir, 'ansible'));
  fs.writeFileSync(path.join(dir, 'inventory.ini'), `${readmeInventory()}ansible_port=9\n`);
  fs.writeFileSync(path.join(dir, 'hosts.txt'), '# one [user@]host per line\nagy@build-04.invalid\n');
  fs.writeFileSync(path.join(dir, ARCHIVE), 'not a real server archive: the play stops at the host\n');
  fs.mkdirSync(path.join(dir, 'bin'));
  const shim = `#!/bin/sh\nexec ${AGYCTL_ARGV.map((a) => `'${a}'`).join(' ')} "$@"\n`;
  fs.writeFileSync(path.join(dir, 'bin', 'agyctl'), shim, { mode: 0o755 });
  return dir;
}

async function sh(line: string, dir: string): Promise<{ code: number; out: string }> {
  const r = await execa('sh', ['-euc', line], {
    cwd: dir,
    reject: false,
    timeout: 240_000,
    all: true,
    extendEnv: false,
    env: {
      PATH: `${path.join(dir, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: dir,
      LANG: 'C.UTF-8',
      ANSIBLE_NOCOLOR: '1',
      ANSIBLE_LOCAL_TEMP: path.join(dir, 'tmp'),
      ANSIBLE_SSH_ARGS: '-o ConnectTimeout=5 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null',
    },
  });
  return { code: r.exitCode ?? -1, out: String(r.all) };
}

/** What a documented command must show here: setup steps succeed; plays and connects end at the closed host. */
async function expectRunsAsWritten(line: string, dir: string): Promise<void> {
  const hex = (await sh(`sha256sum ${ARCHIVE}`, dir)).out.split(' ')[0]!;
  const { code, out } = await sh(line.replace('<HEX>', hex), dir);
  if (/^ansible-playbook /.test(line)) {
    expect(out, line).toMatch(/^PLAY \[/m);
    expect(out, line).toMatch(/build-01\s+: ok=\d+\s+changed=\d+\s+unreachable=1/);
    expect(code, `${line}\n${out}`).toBe(4);
  } else if (/^agyctl connect /.test(line)) {
    expect(out, line).toMatch(/failed/);
    // The README's inventory read whole: its hosts, and the port its vars give them.
    if (line.includes('inventory.ini')) expect(out, line).toMatch(/build-01[\s\S]*port 9: Connection refused/);
    expect(out, line).not.toMatch(/^error: .*(unknown option|usage)/im);
    expect(code, `${line}\n${out}`).toBe(4);
  } else expect(code, `${line}\n${out}`).toBe(0);
}

beforeAll(() => {
  for (const tool of ['ansible-playbook', 'ansible-galaxy', 'ansible-inventory'])
    if (!which(tool)) throw new Error(`${tool} is not installed; .ci/run installs it: apt-get install ansible-core`);
  controller = makeController();
});
afterAll(() => fs.rmSync(controller, { recursive: true, force: true }));

describe('the fleet docs, run as written', () => {
  it("ansible/README.md's collection install: built and installed, or linked from the checkout", async () => {
    const [build, install, mkdir, link, ...rest] = docCommands('ansible/README.md');
    expect(build).toMatch(/^ansible-galaxy collection build ansible\/$/);
    expect(install).toMatch(/^ansible-galaxy collection install agyctl-fleet-[\d.]+\.tar\.gz$/);
    for (const line of [build!, install!]) await expectRunsAsWritten(line, controller);
    const linked = makeController();
    try {
      for (const line of [mkdir!, link!]) await expectRunsAsWritten(line, linked);
      const site = rest.find((l) => l.endsWith('agyctl.fleet.site'))!;
      await expectRunsAsWritten(site, linked); // Ansible finds the playbook through the link
    } finally {
      fs.rmSync(linked, { recursive: true, force: true });
    }
  }, 600_000);

  it("every other command of ansible/README.md and docs/fleet.md's sh blocks, and the backup play's line", async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'ansible', 'README.md'), 'utf8');
    const backup = /`(ansible-playbook -i inventory\.ini agyctl\.fleet\.backup)`/.exec(readme)?.[1];
    expect(backup).toBeDefined();
    const fleetDoc = docCommands('docs/fleet.md').filter(
      (l) =>
        // The air-gapped block (release files, a signature) is fleet-air-gapped.test.ts; the
        // sanity block needs the collection's own checkout layout: fleet-sanity.test.ts.
        !/RELEASE|ssh-keygen|ansible-test|ansible-lint|\/tmp\/c\b/.test(l),
    );
    const lines = [...new Set([...docCommands('ansible/README.md').slice(4), backup!, ...fleetDoc])];
    expect(lines.filter((l) => l.startsWith('agyctl connect')).length).toBeGreaterThanOrEqual(5);
    expect(lines.filter((l) => / agyctl\.fleet\.(site|health|server|backup)\b/.test(l)).length).toBe(4);
    // The collection as the README's first block installs it (done by the test above, unless run alone).
    if (!fs.existsSync(path.join(controller, '.ansible', 'collections', 'ansible_collections', 'agyctl', 'fleet')))
      for (const line of docCommands('ansible/README.md').slice(0, 2)) await expectRunsAsWritten(line, controller);
    for (const line of lines) await expectRunsAsWritten(line, controller);
  }, 900_000);
});
