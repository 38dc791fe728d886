/**
 * Every command docs/server.md ("## Try it") and the README ("## Install the
 * server") tell a user to run, run as written with bash (the sum for `<HEX>`),
 * against fake builds with the documented names: the user's steps as a user
 * created for the run, root's in a mount namespace whose /opt is a fresh
 * tmpfs (so the box's own /opt is never touched).
 *
 * @module-tag root
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeSandbox, ROOT, type Sandbox, simPath } from '../../helpers/cli.js';
import { createUser, type OsUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';
import { fakeBuild, sha256Of, writeZip } from '../../helpers/server-archive.js';

beforeAll(useReadableApp);
requireRoot('the server docs tests');

let sb: Sandbox | undefined;
let user: OsUser | undefined;
afterEach(() => {
  user?.remove();
  sb = undefined;
  user = undefined;
});

/** The ```sh blocks of a file's section. */
function blocks(file: string, heading: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file} has no "${heading}"`);
  const end = text.indexOf('\n## ', start + heading.length + 2);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

interface Workspace {
  dir: string;
  bin: string;
  hex: string;
}

/** The documented archives and SHA256SUMS in a directory everyone can read, and `agyctl` on a PATH. */
function workspace(box: Sandbox): Workspace {
  const dir = path.join(box.root, 'downloads');
  fs.mkdirSync(dir, { mode: 0o755 });
  const sums: string[] = [];
  for (const v of ['1.3.0', '1.3.1']) {
    const name = `antigravity-acp-${v}-linux-x86_64.zip`;
    writeZip(path.join(dir, name), fakeBuild(simPath(), { AGY_SIM_VERSION: `agy_acp_server_${v}_RC01` }));
    fs.chmodSync(path.join(dir, name), 0o644);
    sums.push(`${sha256Of(path.join(dir, name))}  ${name}`);
  }
  fs.writeFileSync(path.join(dir, 'SHA256SUMS'), `${sums.join('\n')}\n`, { mode: 0o644 });
  const bin = path.join(box.root, 'bin');
  fs.mkdirSync(bin, { mode: 0o755 });
  const agyctl = path.join(path.dirname(path.dirname(simPath())), 'bin', 'agyctl.js');
  fs.writeFileSync(path.join(bin, 'agyctl'), `#!/bin/sh\nexec '${process.execPath}' '${agyctl}' "$@"\n`, {
    mode: 0o755,
  });
  return { dir, bin, hex: sha256Of(path.join(dir, 'antigravity-acp-1.3.0-linux-x86_64.zip')) };
}

const script = (ws: Workspace, block: string): string => `set -euo pipefail\n${block.replaceAll('<HEX>', ws.hex)}`;

function userBox(): { box: Sandbox; who: OsUser; ws: Workspace } {
  sb = makeSandbox();
  fs.chmodSync(sb.root, 0o755);
  user = createUser(sb.home);
  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, sb.home]);
  return { box: sb, who: user, ws: workspace(sb) };
}

async function runAsUser(box: Sandbox, who: OsUser, ws: Workspace, block: string) {
  return execa('bash', ['-c', script(ws, block)], {
    env: { PATH: `${ws.bin}:/usr/bin:/bin`, HOME: box.home, LANG: 'C.UTF-8', NO_COLOR: '1' },
    extendEnv: false,
    cwd: ws.dir,
    uid: who.uid,
    gid: who.gid,
    reject: false,
    timeout: 180_000,
    stdin: 'ignore',
  });
}

describe('docs/server.md and the README: the server install steps', () => {
  it("docs/server.md's user steps, as a user: install, list, probe, status; update, use, remove, prune", async () => {
    const { box, who, ws } = userBox();
    const [first, update, root] = blocks('docs/server.md', '## Try it');
    expect(root).toContain('sudo agyctl server install');
    for (const block of [first, update]) {
      const r = await runAsUser(box, who, ws, block ?? '');
      expect(r.exitCode, `${block}\n${String(r.stdout)}\n${String(r.stderr)}`).toBe(0);
    }
    const store = path.join(box.home, '.local', 'share', 'agyctl', 'servers', 'antigravity-acp');
    expect(fs.readlinkSync(path.join(store, 'current'))).toBe('1.3.0');
  }, 240_000);

  it("docs/server.md's root steps, as root, into /opt/agyctl/servers (a private /opt)", async () => {
    sb = makeSandbox();
    const ws = workspace(sb);
    const root = blocks('docs/server.md', '## Try it')[2] ?? '';
    const inner = `mount -t tmpfs tmpfs /opt\nsudo() { "$@"; }\n${script(ws, root)}\ntest "$(readlink /opt/agyctl/servers/antigravity-acp/current)" = 1.3.0\nstat -c '%u %a' /opt/agyctl/servers/antigravity-acp/1.3.0/agy_acp_server.par`;
    const r = await execa('unshare', ['--mount', '--propagation', 'private', 'bash', '-c', inner], {
      env: { PATH: `${ws.bin}:/usr/sbin:/usr/bin:/sbin:/bin`, HOME: sb.home, LANG: 'C.UTF-8', NO_COLOR: '1' },
      extendEnv: false,
      cwd: ws.dir,
      reject: false,
      timeout: 180_000,
      stdin: 'ignore',
    });
    expect(r.exitCode, `${String(r.stdout)}\n${String(r.stderr)}`).toBe(0);
    expect(String(r.stdout).trim().split('\n').at(-1)).toBe('0 755');
  }, 240_000);

  it('the README\'s "Install the server" steps, as a user', async () => {
    const { box, who, ws } = userBox();
    const [block] = blocks('README.md', '## Install the server');
    expect(block).toContain('agyctl server install');
    const r = await runAsUser(box, who, ws, block ?? '');
    expect(r.exitCode, `${String(r.stdout)}\n${String(r.stderr)}`).toBe(0);
    expect(String(r.stdout)).toMatch(/\* 1\.3\.0/);
  }, 240_000);
});
