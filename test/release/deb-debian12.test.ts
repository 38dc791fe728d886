/**
 * The .deb where a user installs it: a pristine Debian 12 tree made by
 * debootstrap (no Node, no npm, no compiler; test/helpers/debian-tree.ts),
 * `dpkg -i`, then agyctl's jobs in a chroot: --version, version, settings
 * set-auth, a static check, backup and backup verify of a real conversation
 * database (written outside the tree with the simulator's own store, as the
 * server writes it), restore --dry-run. Also lintian: no errors.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEB, EXE } from '../helpers/cli.js';
import { debianTreeUnavailable, inTree, pristineDebianTree, type TreeView, treeView } from '../helpers/debian-tree.js';
import { addConversation, authedSandbox } from '../helpers/sim-conversations.js';

let view: TreeView;
let scratch: string;
const ids: string[] = [];

beforeAll(async () => {
  const why = debianTreeUnavailable();
  if (why) throw new Error(`The Debian 12 test cannot run here: ${why}.`);
  const tree = await pristineDebianTree('bookworm');
  scratch = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-deb-test-'));
  view = treeView(tree, scratch);
  // What the test brings in: the .deb, a box's state (settings, a token, two conversations), and a stand-in
  // for the server binary that a static check only looks up on PATH (it exits 99 if anything runs it).
  const root = path.join(view.upper, 'root');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  fs.copyFileSync(DEB, path.join(root, 'agyctl.deb'));
  const box = authedSandbox();
  try {
    ids.push(addConversation(box, 3), addConversation(box, 5, '/work/other', 40));
    fs.rmSync(path.join(box.stateDir, 'settings.json'));
    fs.cpSync(path.join(box.home, '.gemini'), path.join(root, '.gemini'), { recursive: true });
  } finally {
    box.cleanup();
  }
  const bin = path.join(view.upper, 'usr', 'local', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'agy_acp_server'), '#!/bin/sh\necho "stand-in: not a server" >&2\nexit 99\n', {
    mode: 0o755,
  });
}, 20 * 60_000);

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

const json = (stdout: string): Record<string, unknown> => JSON.parse(stdout) as Record<string, unknown>;

describe('the .deb on a pristine Debian 12 (bookworm) tree with no Node', () => {
  it('installs with dpkg -i: /usr/bin/agyctl and its completions, and Node is still nowhere', async () => {
    const before = await inTree(view, 'command -v node nodejs npm cc gcc || echo none');
    expect(before.stdout.trim()).toBe('none');
    const r = await inTree(view, `dpkg -i /root/agyctl.deb && dpkg-query -W -f '\${Status} \${Version}' agyctl`);
    expect(r.stderr).not.toMatch(/dependency problems|error/i);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/install ok installed \d+\.\d+\.\d+$/);
    const files = await inTree(
      view,
      'ls /usr/bin/agyctl /usr/share/bash-completion/completions/agyctl /usr/share/zsh/vendor-completions/_agyctl /usr/share/fish/vendor_completions.d/agyctl.fish /usr/share/doc/agyctl/copyright; command -v node || echo no-node',
    );
    expect(files.exitCode).toBe(0);
    expect(files.stdout.trim().split('\n')).toHaveLength(6);
    expect(files.stdout).toContain('no-node');
  });

  it('runs: --version, version (the binding loads and answers), settings set-auth, a static check', async () => {
    const v = await inTree(view, 'agyctl --version');
    expect(v).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    const version = await inTree(view, 'agyctl version --json');
    expect(version.exitCode).toBe(0);
    expect(json(version.stdout).version).toMatchObject({
      runtime: 'executable',
      executable: '/usr/bin/agyctl',
      node: expect.stringMatching(/^24\./),
      binding: expect.stringMatching(/^\/root\/\.cache\/agyctl\/better_sqlite3-[0-9a-f]{32}\.node$/),
    });
    const setAuth = await inTree(view, 'agyctl settings set-auth oauth-personal --json');
    expect(setAuth.exitCode).toBe(0);
    expect(json(setAuth.stdout).settings).toMatchObject({ authType: 'oauth-personal', written: true });
    const check = await inTree(view, 'agyctl check --json');
    expect(check.exitCode).toBe(0);
    expect(json(check.stdout)).toMatchObject({ ok: true, status: 'ok' });
  });

  it('backs up the conversations, verifies the snapshot and shows what a restore would do', async () => {
    const backup = await inTree(view, 'agyctl backup --to /root/backups --json');
    expect(backup.stderr).toBe('');
    expect(backup.exitCode).toBe(0);
    const verify = await inTree(view, 'agyctl backup verify latest --from /root/backups --json');
    expect(verify.exitCode).toBe(0);
    expect(JSON.stringify(json(verify.stdout))).toContain(ids[0]);
    const dry = await inTree(
      view,
      'before=$(find /root/.gemini -type f -exec sha256sum {} + | sort); agyctl restore latest --from /root/backups --dry-run --json; after=$(find /root/.gemini -type f -exec sha256sum {} + | sort); [ "$before" = "$after" ] || { echo changed >&2; exit 9; }',
    );
    expect(dry.exitCode).toBe(0);
    const plan = JSON.stringify(json(dry.stdout));
    for (const id of ids) expect(plan).toContain(id);
  });

  it('`agyctl help exit-codes` names the docs by paths that are there on the box (gzipped under /usr/share/doc)', async () => {
    const help = await inTree(view, 'agyctl help exit-codes');
    expect(help.exitCode).toBe(0);
    const named = [
      ...new Set(help.stdout.replace(/\n\s*/g, '').match(/\/usr\/share\/doc\/agyctl\/docs\/[\w-]+\.md\.gz/g)),
    ];
    expect(named.length, help.stdout).toBeGreaterThan(0);
    expect(help.stdout).not.toMatch(/[(\s]docs\/[\w-]+\.md\b/);
    const there = await inTree(view, `ls ${named.join(' ')}`);
    expect(there.exitCode, there.stderr).toBe(0);
  });
});

describe('man pages', () => {
  it("the .deb has one page per command, the executable's own, each rendering without a warning", async () => {
    const listing = (await execa('dpkg-deb', ['-c', DEB])).stdout;
    const pages = [...listing.matchAll(/\.\/usr\/share\/man\/man1\/(agyctl[\w-]*\.1)\.gz$/gm)].map((m) => m[1]);
    const expected = JSON.parse((await execa(EXE, ['--json', '__man-pages'])).stdout) as { pages: { file: string }[] };
    expect(pages.sort()).toEqual(expected.pages.map((p) => p.file).sort());
    expect(pages).toContain('agyctl-backup-verify.1');
    const unpacked = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-deb-man-'));
    try {
      await execa('dpkg-deb', ['-x', DEB, unpacked]);
      for (const page of pages) {
        const r = await execa(
          'man',
          ['--warnings', '-E', 'UTF-8', '-l', '-Tutf8', '-Z', path.join(unpacked, 'usr/share/man/man1', `${page}.gz`)],
          { env: { LC_ALL: 'C.UTF-8', MANWIDTH: '80' }, reject: false },
        );
        expect({ page, stderr: r.stderr, exit: r.exitCode }).toEqual({ page, stderr: '', exit: 0 });
      }
    } finally {
      fs.rmSync(unpacked, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('lintian', () => {
  it(
    'finds no errors in the .deb (overrides carry their reasons)',
    async () => {
      const r = await execa('lintian', ['--fail-on', 'error', DEB], {
        reject: false,
        timeout: 10 * 60_000,
      });
      expect(String(r.stdout)).not.toMatch(/^E: /m);
      expect(r.exitCode).toBe(0);
    },
    10 * 60_000,
  );
});
