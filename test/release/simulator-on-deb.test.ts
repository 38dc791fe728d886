/**
 * docs/simulator.md's route for a box installed from the .deb, run as written
 * (sh -eu) in a pristine Debian 12 tree (debootstrap minbase: no Node, no npm,
 * no jq) after `dpkg -i`: `agyctl simulator` seeds conversations and stands in
 * for the server through probe, a detached login finished by pasting the
 * redirect, check --live, sessions and a proven backup.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEB, ROOT } from '../helpers/cli.js';
import { debianTreeUnavailable, inTree, pristineDebianTree, type TreeView, treeView } from '../helpers/debian-tree.js';

let view: TreeView;
let scratch: string;

beforeAll(async () => {
  const why = debianTreeUnavailable();
  if (why) throw new Error(`The Debian 12 test cannot run here: ${why}.`);
  const tree = await pristineDebianTree('bookworm');
  scratch = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-deb-sim-'));
  view = treeView(tree, scratch);
  const root = path.join(view.upper, 'root');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  fs.copyFileSync(DEB, path.join(root, 'agyctl.deb'));
  const r = await inTree(view, 'dpkg -i /root/agyctl.deb >/dev/null');
  if (r.exitCode !== 0) throw new Error(`dpkg -i failed: ${r.stderr}`);
}, 20 * 60_000);

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** The sh block under "On a box without Node" in docs/simulator.md. */
function route(): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'simulator.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## On a box without Node'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/simulator.md has no sh block under "On a box without Node"');
  return block;
}

describe('docs/simulator.md: a .deb box with no Node tries agyctl against `agyctl simulator`', () => {
  it('runs the route as written', async () => {
    const script = route();
    expect(script).toContain('AGYCTL_SERVER="agyctl simulator"');
    const r = await inTree(view, `command -v node nodejs jq && exit 9\n${script}`);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    // Seeded: three conversation ids; then the simulator's build answers probe.
    expect(r.stdout).toMatch(/^([0-9a-f-]{36}\n){3}/);
    expect(r.stdout).toContain('agy_acp_server_20260818_01_RC01');
    expect(r.stdout).toContain('proven in a fresh server');
    expect(r.stdout).toMatch(/status: ok/);
    expect(r.stdout).toMatch(/proved: a fresh server loaded 3\/3 session\(s\)/);
    expect(r.stdout).not.toMatch(/FAILED|NOT proved/);
  }, 180_000);
});
