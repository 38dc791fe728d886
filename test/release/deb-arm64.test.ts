/**
 * The arm64 .deb where an arm64 user installs it: a pristine arm64 Debian 12
 * tree (debootstrap --arch=arm64 --foreign, its second stage run under
 * qemu-aarch64-static: test/helpers/debian-tree.ts), with no Node, where
 * every program, dpkg and agyctl included, runs under qemu. `dpkg -i`, then
 * agyctl's jobs in a chroot: version (the arm64 SQLite binding loads and
 * answers), backup and backup verify of real conversation databases (written
 * outside the tree with the simulator's own store, as the server writes
 * them), restore --dry-run, `agyctl simulator` standing in for the server
 * (a live check, sessions, a proven backup), docs/install.md's arm64 steps,
 * and lintian.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEB_ARM64, EXE_ARM64, RELEASE_DIR, ROOT } from '../helpers/cli.js';
import { debianTreeUnavailable, inTree, pristineDebianTree, type TreeView, treeView } from '../helpers/debian-tree.js';
import { addConversation, authedSandbox } from '../helpers/sim-conversations.js';

let view: TreeView;
let scratch: string;
const ids: string[] = [];

beforeAll(async () => {
  const why = debianTreeUnavailable('arm64');
  if (why) throw new Error(`The arm64 Debian 12 test cannot run here: ${why}.`);
  const tree = await pristineDebianTree('bookworm', 'minbase', 'arm64');
  scratch = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-deb-arm64-'));
  view = treeView(tree, scratch, 'arm64');
  const root = path.join(view.upper, 'root');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  fs.copyFileSync(DEB_ARM64, path.join(root, 'agyctl.deb'));
  const box = authedSandbox();
  try {
    ids.push(addConversation(box, 3), addConversation(box, 5, '/work/other', 40));
    fs.cpSync(path.join(box.home, '.gemini'), path.join(root, '.gemini'), { recursive: true });
  } finally {
    box.cleanup();
  }
  // A first run makes the tree: up to 20 minutes for the download, 40 for the second stage under qemu.
}, 61 * 60_000);

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

const json = (stdout: string): Record<string, unknown> => JSON.parse(stdout) as Record<string, unknown>;
const installed = (script: string): string => `dpkg -i /root/agyctl.deb >/dev/null\n${script}`;

describe('the arm64 .deb on a pristine arm64 Debian 12 tree with no Node, under qemu', () => {
  it('is an arm64 system without Node, and dpkg -i installs the arm64 package', async () => {
    const before = await inTree(
      view,
      'dpkg --print-architecture; uname -m; command -v node nodejs npm || echo no-node',
    );
    expect(before.stdout.trim().split('\n')).toEqual(['arm64', 'aarch64', 'no-node']);
    const r = await inTree(
      view,
      `dpkg -i /root/agyctl.deb && dpkg-query -W -f '\${Status} \${Architecture} \${Version}' agyctl`,
    );
    expect(r.stderr).not.toMatch(/dependency problems|error/i);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/install ok installed arm64 \d+\.\d+\.\d+$/);
  }, 300_000);

  it('agyctl version: the arm64 executable loads its SQLite binding and queries it', async () => {
    const r = await inTree(view, installed('agyctl version --json'));
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json(r.stdout);
    expect(out.ok).toBe(true);
    expect(out.version).toMatchObject({
      runtime: 'executable',
      executable: '/usr/bin/agyctl',
      node: expect.stringMatching(/^24\./),
      sqlite: expect.stringMatching(/^3\.\d+\.\d+$/),
      binding: expect.stringMatching(/^\/root\/\.cache\/agyctl\/better_sqlite3-[0-9a-f]{32}\.node$/),
    });
  }, 300_000);

  it('backs up the conversations, verifies the snapshot and shows what a restore would do', async () => {
    const r = await inTree(
      view,
      installed(
        [
          'agyctl backup --to /root/backups --json > /root/backup.json',
          'agyctl backup verify latest --from /root/backups --json > /root/verify.json',
          'before=$(find /root/.gemini -type f -exec sha256sum {} + | sort)',
          'agyctl restore latest --from /root/backups --dry-run --json > /root/dry.json',
          'after=$(find /root/.gemini -type f -exec sha256sum {} + | sort)',
          '[ "$before" = "$after" ] || { echo "restore --dry-run changed files" >&2; exit 9; }',
          'for f in backup verify dry; do cat "/root/$f.json"; echo; echo "--- $f"; done',
        ].join('\n'),
      ),
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [backup, verify, dry] = r.stdout
      .split(/^--- \w+$/m)
      .slice(0, 3)
      .map(json);
    expect(backup?.ok).toBe(true);
    expect(verify?.ok).toBe(true);
    for (const id of ids) {
      expect(JSON.stringify(verify)).toContain(id);
      expect(JSON.stringify(dry)).toContain(id);
    }
  }, 660_000);

  it('against `agyctl simulator` as the server: a live check, the sessions and a proven backup', async () => {
    // docs/simulator.md's route for a box without Node, with the token written as a sign-in leaves it: the
    // detached login itself is left out, its deadlines are for a real machine, not a loaded one under qemu.
    const r = await inTree(
      view,
      installed(
        [
          'export HOME="$(mktemp -d)" AGYCTL_SERVER="agyctl simulator"',
          'agyctl simulator --seed-conversations',
          'agyctl settings set-auth oauth-personal',
          'state="$HOME/.gemini/antigravity-acp"',
          `printf '%s' '{"access_token":"ya29.fixture","refresh_token":"1//fixture","token_type":"Bearer","expiry_date":1}' > "$state/acp_token.json"`,
          'chmod 600 "$state/acp_token.json"',
          'agyctl check --live',
          'agyctl sessions',
          'agyctl backup --prove',
        ].join('\n'),
      ),
    );
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/^([0-9a-f-]{36}\n){3}/);
    expect(r.stdout).toMatch(/live +antigravity-acp agy_acp_server_20260818_01_RC01 answered initialize/);
    expect(r.stdout).toMatch(/status: ok/);
    expect(r.stdout).toMatch(/3 session\(s\): 3 snapshotted, 0 reused, 0 failed/);
    expect(r.stdout).toMatch(/proved: a fresh server loaded 3\/3 session\(s\)/);
  }, 660_000);
});

describe('docs/install.md "On arm64": the commands as written, on the arm64 box with no Node', () => {
  it('check the sums, install, and agyctl version loads the binding', async () => {
    const text = fs.readFileSync(path.join(ROOT, 'docs', 'install.md'), 'utf8');
    const script = /```sh\n([\s\S]*?)```/.exec(text.slice(text.indexOf('### On arm64')))?.[1];
    if (!script) throw new Error('docs/install.md has no sh block under "### On arm64"');
    expect(script).toMatch(/dpkg -i agyctl_[\d.]+_arm64\.deb/);
    const box = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-install-arm64-'));
    const docView = treeView(view.lower, box, 'arm64');
    try {
      const dir = path.join(docView.upper, 'root', 'release');
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const file of [DEB_ARM64, EXE_ARM64, path.join(RELEASE_DIR, 'SHA256SUMS')])
        fs.copyFileSync(file, path.join(dir, path.basename(file)));
      // A minimal Debian has no sudo: where the doc says sudo, the box's runs the command (as root).
      const sbin = path.join(docView.upper, 'usr', 'local', 'sbin');
      fs.mkdirSync(sbin, { recursive: true });
      fs.writeFileSync(path.join(sbin, 'sudo'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
      const r = await inTree(docView, `cd /root/release\n${script}`);
      expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/^agyctl_[\d.]+_arm64\.deb: OK$/m);
      expect(r.stdout).toMatch(/^agyctl-[\d.]+-linux-arm64: OK$/m);
      expect(r.stdout).toMatch(/^SQLite \d+\.\d+/m);
      expect(r.stdout).toMatch(/^binding \/root\/\.cache\/agyctl\/better_sqlite3-[0-9a-f]+\.node$/m);
    } finally {
      fs.rmSync(box, { recursive: true, force: true });
    }
  }, 660_000);
});

describe('lintian on the arm64 .deb', () => {
  it(
    'finds no errors (the ELF files are arm64, as the package says; overrides carry their reasons)',
    async () => {
      const r = await execa('lintian', ['--fail-on', 'error', DEB_ARM64], { reject: false, timeout: 10 * 60_000 });
      expect(String(r.stdout)).not.toMatch(/^E: /m);
      expect(r.exitCode).toBe(0);
    },
    10 * 60_000,
  );
});
