/**
 * The install commands of README.md ("Install") and docs/install.md, run as
 * written (sh -eu) in the directory holding the release files, in a pristine
 * Debian 12 tree (debootstrap minbase: no Node), each in its own fresh view:
 * the checksums check, `dpkg -i`, the executable's `install`, and `agyctl
 * version` loading the SQLite binding. The npm line (laptops with Node) runs
 * in test/e2e/cli/install-binding.test.ts instead. A minimal Debian has no sudo:
 * where a doc says `sudo`, the box gets one that runs the command (as root).
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEB, EXE, RELEASE_DIR, ROOT } from '../helpers/cli.js';
import { debianTreeUnavailable, inTree, pristineDebianTree, treeView } from '../helpers/debian-tree.js';

let tree: string;
const scratches: string[] = [];

beforeAll(async () => {
  const why = debianTreeUnavailable();
  if (why) throw new Error(`The Debian 12 test cannot run here: ${why}.`);
  tree = await pristineDebianTree('bookworm');
}, 20 * 60_000);

afterAll(() => {
  for (const s of scratches) fs.rmSync(s, { recursive: true, force: true });
});

/**
 * The first sh block after `heading` in `doc` that installs the .deb, without the lines that need Node
 * and npm. (docs/install.md's signature check before it runs in test/release/signature.test.ts.)
 */
function installBlock(doc: string, heading: string): string {
  const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
  const at = heading ? text.indexOf(heading) : 0;
  const blocks = [...text.slice(at).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes('dpkg -i'));
  if (!block) throw new Error(`${doc} has no sh block with dpkg -i after ${JSON.stringify(heading)}`);
  return block
    .split('\n')
    .filter((line) => !/^\s*npm /.test(line))
    .join('\n');
}

/** A fresh view of the tree with the release files in /root/release, and a sudo if the doc uses one. */
function boxWithReleaseFiles(): ReturnType<typeof treeView> {
  const scratch = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-install-docs-'));
  scratches.push(scratch);
  const view = treeView(tree, scratch);
  const dir = path.join(view.upper, 'root', 'release');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of [DEB, EXE, path.join(RELEASE_DIR, 'SHA256SUMS')])
    fs.copyFileSync(file, path.join(dir, path.basename(file)));
  const sbin = path.join(view.upper, 'usr', 'local', 'sbin');
  fs.mkdirSync(sbin, { recursive: true });
  fs.writeFileSync(path.join(sbin, 'sudo'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
  return view;
}

describe.each([
  ['README.md', '## Install'],
  ['docs/install.md', ''],
])('%s: the install commands, as written, on a Debian 12 box with no Node', (doc, heading) => {
  it('check the sums, install, and agyctl version loads the binding', async () => {
    const script = installBlock(doc, heading);
    expect(script).toMatch(/dpkg -i agyctl_[\d.]+_amd64\.deb/);
    expect(script).toMatch(/^agyctl version\b/m);
    const r = await inTree(boxWithReleaseFiles(), `cd /root/release\n${script}`);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    if (script.includes('sha256sum -c')) expect(r.stdout).toMatch(/^agyctl_[\d.]+_amd64\.deb: OK$/m);
    expect(r.stdout).toMatch(/^SQLite \d+\.\d+/m);
    expect(r.stdout).toMatch(/^binding \/root\/\.cache\/agyctl\/better_sqlite3-[0-9a-f]+\.node$/m);
  }, 180_000);
});
