/**
 * The .deb on the other Debian releases, each a pristine debootstrap minbase
 * tree cached like Debian 12's (test/helpers/debian-tree.ts; no Node, no
 * compiler):
 * - Debian 13 (trixie): `dpkg -i`, then `agyctl version` (the SQLite binding
 *   loads), a static `check --json`, `backup` and `backup verify` of real
 *   conversation databases, as on Debian 12 (deb-debian12.test.ts).
 * - Debian 11 (bullseye, glibc 2.31): the executable's addon needs
 *   GLIBC_2.34, so the .deb's Pre-Depends (computed by dpkg-shlibdeps at
 *   build time) says libc6 (>= 2.34) and `dpkg -i` refuses with that reason
 *   before unpacking anything, instead of an install whose `agyctl version`
 *   fails at run time.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEB } from '../helpers/cli.js';
import { debianTreeUnavailable, inTree, pristineDebianTree, type TreeView, treeView } from '../helpers/debian-tree.js';
import { addConversation, authedSandbox } from '../helpers/sim-conversations.js';

const scratches: string[] = [];
const json = (stdout: string): Record<string, unknown> => JSON.parse(stdout) as Record<string, unknown>;

/** A view of the cached tree for `suite` holding the .deb, a signed-in state with conversations, a stand-in server. */
async function box(suite: string, ids: string[]): Promise<TreeView> {
  const why = debianTreeUnavailable();
  if (why) throw new Error(`The Debian ${suite} test cannot run here: ${why}.`);
  const tree = await pristineDebianTree(suite);
  const scratch = fs.mkdtempSync(path.join('/var/tmp', `agyctl-deb-${suite}-`));
  scratches.push(scratch);
  const view = treeView(tree, scratch);
  const root = path.join(view.upper, 'root');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  fs.copyFileSync(DEB, path.join(root, 'agyctl.deb'));
  const sandbox = authedSandbox();
  try {
    ids.push(addConversation(sandbox, 3), addConversation(sandbox, 4, '/work/other', 20));
    fs.cpSync(path.join(sandbox.home, '.gemini'), path.join(root, '.gemini'), { recursive: true });
  } finally {
    sandbox.cleanup();
  }
  const bin = path.join(view.upper, 'usr', 'local', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'agy_acp_server'), '#!/bin/sh\necho "stand-in: not a server" >&2\nexit 99\n', {
    mode: 0o755,
  });
  return view;
}

afterAll(() => {
  for (const dir of scratches) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the .deb on a pristine Debian 13 (trixie) tree with no Node', () => {
  let view: TreeView;
  const ids: string[] = [];
  beforeAll(async () => {
    view = await box('trixie', ids);
  }, 20 * 60_000);

  it('installs with dpkg -i, loads its SQLite binding, and a static check passes', async () => {
    const install = await inTree(view, 'dpkg -i /root/agyctl.deb && command -v node || echo no-node');
    expect(install.exitCode, install.stderr).toBe(0);
    expect(install.stderr).not.toMatch(/dependency problems|error/i);
    expect(install.stdout).toContain('no-node');
    const version = await inTree(view, 'dpkg -i /root/agyctl.deb >/dev/null && agyctl version --json');
    expect(version.exitCode, version.stderr).toBe(0);
    expect(json(version.stdout).version).toMatchObject({
      runtime: 'executable',
      sqlite: expect.stringMatching(/^3\./),
    });
    const check = await inTree(view, 'dpkg -i /root/agyctl.deb >/dev/null && agyctl check --json');
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    expect(json(check.stdout)).toMatchObject({ ok: true, status: 'ok' });
  });

  it('backs up the conversations and verifies the snapshot', async () => {
    const r = await inTree(
      view,
      'dpkg -i /root/agyctl.deb >/dev/null && agyctl backup --to /root/backups --json >/dev/null && agyctl backup verify latest --from /root/backups --json',
    );
    expect(r.exitCode, r.stderr).toBe(0);
    for (const id of ids) expect(JSON.stringify(json(r.stdout))).toContain(id);
  });
});

describe('the .deb on a pristine Debian 11 (bullseye) tree (glibc 2.31)', () => {
  let view: TreeView;
  beforeAll(async () => {
    view = await box('bullseye', []);
  }, 20 * 60_000);

  it('is refused by dpkg -i, naming the libc6 it needs, before anything is unpacked', async () => {
    const r = await inTree(
      view,
      'if dpkg -i /root/agyctl.deb; then echo installed; else echo "exit $?"; fi; dpkg-query -W -f \'${Status}\\n\' agyctl; ls /usr/bin/agyctl 2>/dev/null || echo no-file',
    );
    expect(r.stdout).toMatch(/^exit 1$/m);
    expect(r.stderr).toMatch(/agyctl pre-depends on libc6 \(>= 2\.3[4-9]\)/);
    expect(r.stderr).toMatch(/libc6(:amd64)? is installed, but is version 2\.31-/);
    expect(r.stderr).toContain('pre-dependency problem - not installing agyctl');
    expect(r.stdout).toMatch(/^\S+ ok not-installed$/m);
    expect(r.stdout).toContain('no-file');
  });
});
