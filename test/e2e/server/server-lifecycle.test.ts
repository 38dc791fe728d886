/**
 * `agyctl server` through a server's life, as root (the tree root's, the
 * proof as the state dir's owner, a user created for the run) and as that
 * user (their own prefix, found without --server): install → signed in
 * (the simulator's real OAuth flow) → check --live → install of a second
 * version → a third that rejects the credentials, rolled back → use of the
 * first → remove refused for the current one → prune. And an install
 * while a `login --detach` is pending on an installed server.
 *
 * @module-tag root
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseEvents, parseJson, type Sandbox, simPath } from '../../helpers/cli.js';
import { createUser, type OsUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';
import { fakeBuild, sha256Of, writeTarGz, writeZip } from '../../helpers/server-archive.js';
import { loginViaSim } from '../../helpers/sim-login.js';

beforeAll(useReadableApp);
requireRoot('the server lifecycle tests');

let sb: Sandbox | undefined;
let user: OsUser | undefined;
afterEach(() => {
  user?.remove();
  sb = undefined;
  user = undefined;
});

/** A sandbox whose home (and signed-in state dir) belongs to a user created for the run. */
async function signedInUserBox(): Promise<{ sb: Sandbox; user: OsUser }> {
  sb = makeSandbox();
  fs.chmodSync(sb.root, 0o755);
  await loginViaSim(sb);
  user = createUser(sb.home);
  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, sb.home]);
  return { sb, user };
}

/** Three builds: v1 (zip), v2 (tar.gz, one file 0777 in the archive), v3 rejects stored credentials. */
async function builds(dir: string): Promise<Record<'v1' | 'v2' | 'v3', { file: string; sum: string }>> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const v1 = path.join(dir, 'antigravity-acp-1.0.0-linux-x86_64.zip');
  writeZip(v1, fakeBuild(simPath(), { AGY_SIM_VERSION: 'agy_acp_server_1.0.0_RC01' }));
  const v2 = path.join(dir, 'antigravity-acp-2.0.0-linux-x86_64.tar.gz');
  await writeTarGz(v2, [
    ...fakeBuild(simPath(), { AGY_SIM_VERSION: 'agy_acp_server_2.0.0_RC01' }),
    { name: 'share', type: 'dir', mode: 0o777 },
    { name: 'share/notes', mode: 0o666, data: 'x' },
  ]);
  const v3 = path.join(dir, 'antigravity-acp-3.0.0-linux-x86_64.zip');
  writeZip(v3, fakeBuild(simPath(), { AGY_SIM_TOKEN_STATE: 'revoked' }));
  for (const f of [v1, v2, v3]) fs.chmodSync(f, 0o644);
  return {
    v1: { file: v1, sum: sha256Of(v1) },
    v2: { file: v2, sum: sha256Of(v2) },
    v3: { file: v3, sum: sha256Of(v3) },
  };
}

const readLink = (store: string): string => fs.readlinkSync(path.join(store, 'current'));

function treeModes(dir: string): Array<{ name: string; uid: number; writableByOthers: boolean }> {
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .map((name) => {
      const st = fs.lstatSync(path.join(dir, name));
      return { name, uid: st.uid, writableByOthers: !st.isSymbolicLink() && (st.mode & 0o022) !== 0 };
    });
}

describe('agyctl server as root, proven as the state dir owner', () => {
  it('install → check --live → install v2 → v3 rolled back (exit 3) → use v1 → remove current refused → prune', async () => {
    const box = await signedInUserBox();
    const prefix = path.join(box.sb.root, 'opt');
    const store = path.join(prefix, 'antigravity-acp');
    const b = await builds(path.join(box.sb.root, 'archives'));
    const run = (...args: string[]) =>
      agyctl(['server', ...args, '--prefix', prefix, '--state-dir', box.sb.stateDir, '--json'], box.sb, {
        timeoutMs: 120_000,
      });

    const one = await run('install', b.v1.file, '--sha256', b.v1.sum);
    expect(one.exitCode, one.stdout).toBe(0);
    expect(
      (parseJson(one.stdout) as { install: { proof: Array<{ step: string }> } }).install.proof.map((s) => s.step),
    ).toEqual(['initialize', 'check --live']);
    const live = await agyctl(
      [
        'check',
        '--live',
        '--state-dir',
        box.sb.stateDir,
        '--server',
        `${path.join(store, 'current', 'agy_acp_server.par')} --uid=`,
      ],
      box.sb,
      { timeoutMs: 90_000 },
    );
    expect(live.exitCode, live.stdout + live.stderr).toBe(0);

    const two = await run('install', b.v2.file, '--sha256', b.v2.sum);
    expect(two.exitCode, two.stdout).toBe(0);
    expect(readLink(store)).toBe('2.0.0');
    for (const entry of treeModes(path.join(store, '2.0.0'))) {
      expect(entry.uid, entry.name).toBe(0);
      expect(entry.writableByOthers, entry.name).toBe(false);
    }
    expect(fs.statSync(path.join(store, '2.0.0', 'share', 'notes')).mode & 0o777).toBe(0o644);

    const three = await run('install', b.v3.file, '--sha256', b.v3.sum);
    expect(three.exitCode, three.stdout).toBe(3);
    expect((parseJson(three.stdout) as { error: { message: string } }).error.message).toMatch(
      /check --live.*version 2\.0\.0 is back in use/,
    );
    expect(readLink(store)).toBe('2.0.0');
    expect(fs.existsSync(path.join(store, '3.0.0'))).toBe(false);

    const use = await run('use', '1.0.0');
    expect(use.exitCode, use.stdout).toBe(0);
    expect(readLink(store)).toBe('1.0.0');
    const removeCurrent = await run('remove', '1.0.0');
    expect(removeCurrent.exitCode).toBe(2);
    expect(parseJson(removeCurrent.stdout)).toMatchObject({ error: { code: 'server-version-current' } });

    const prune = await run('prune', '--keep', '1');
    expect(prune.exitCode, prune.stdout).toBe(0);
    const list = parseJson((await run('list')).stdout) as { servers: Array<{ version: string; current: boolean }> };
    expect(list.servers.map((s) => [s.version, s.current])).toEqual([['1.0.0', true]]);
    expect(fs.existsSync(path.join(store, '2.0.0'))).toBe(false);
  }, 240_000);
});

describe('agyctl server as a user', () => {
  it('installs into ~/.local/share, where agyctl then finds it; v2; use v1; prune', async () => {
    const box = await signedInUserBox();
    const b = await builds(path.join(box.sb.root, 'archives'));
    const [node, bin] = [process.execPath, path.join(path.dirname(path.dirname(simPath())), 'bin', 'agyctl.js')];
    const env = { PATH: process.env.PATH, HOME: box.sb.home, LANG: 'C.UTF-8', NO_COLOR: '1' };
    const asUser = (...args: string[]) =>
      execa(node, [bin, ...args], {
        env,
        extendEnv: false,
        cwd: '/',
        uid: box.user.uid,
        gid: box.user.gid,
        reject: false,
        timeout: 120_000,
        stdin: 'ignore',
      });
    const store = path.join(box.sb.home, '.local', 'share', 'agyctl', 'servers', 'antigravity-acp');

    const one = await asUser('server', 'install', b.v1.file, '--sha256', b.v1.sum, '--json');
    expect(one.exitCode, String(one.stdout) + String(one.stderr)).toBe(0);
    expect(String(one.stdout)).toContain('check --live');
    expect(fs.statSync(path.join(store, '1.0.0', 'agy_acp_server.par')).uid).toBe(box.user.uid);
    const probe = await asUser('probe', '--json');
    expect(probe.exitCode, String(probe.stderr)).toBe(0);
    expect(parseJson(String(probe.stdout))).toMatchObject({
      probe: { agent: { version: 'agy_acp_server_1.0.0_RC01' } },
    });
    const live = await asUser('check', '--live');
    expect(live.exitCode, String(live.stdout)).toBe(0);

    expect((await asUser('server', 'install', b.v2.file, '--sha256', b.v2.sum)).exitCode).toBe(0);
    expect(readLink(store)).toBe('2.0.0');
    expect((await asUser('server', 'use', '1.0.0')).exitCode).toBe(0);
    expect(readLink(store)).toBe('1.0.0');
    const status = await asUser('server', 'status', '--json');
    expect(parseJson(String(status.stdout))).toMatchObject({
      status: { reported: 'agy_acp_server_1.0.0_RC01', mismatch: false },
    });
    expect((await asUser('server', 'prune', '--keep', '1')).exitCode).toBe(0);
    expect(
      fs
        .readdirSync(store)
        .filter((n) => !n.startsWith('.'))
        .sort(),
    ).toEqual(['1.0.0', 'current']);
  }, 240_000);
});

describe('agyctl server install while a login is pending', () => {
  it('is refused (exit 2) on a server of this prefix; --force installs', async () => {
    sb = makeSandbox();
    const data = path.join(sb.root, 'data');
    const prefix = path.join(data, 'agyctl', 'servers');
    const b = await builds(path.join(sb.root, 'archives'));
    expect(
      (
        await agyctl(['server', 'install', b.v1.file, '--sha256', b.v1.sum, '--prefix', prefix], sb, {
          timeoutMs: 90_000,
        })
      ).exitCode,
    ).toBe(0);
    const env = { AGYCTL_SERVER: '', XDG_DATA_HOME: data };
    const login = await agyctl(['login', '--detach', '--json', '--timeout', '60s'], sb, { env });
    expect(login.exitCode, login.stderr).toBe(0);
    expect(parseEvents(login.stdout).map((e) => e.event)).toContain('detached');
    try {
      const refused = await agyctl(
        ['server', 'install', b.v2.file, '--sha256', b.v2.sum, '--prefix', prefix, '--json'],
        sb,
        { env },
      );
      expect(refused.exitCode).toBe(2);
      expect(parseJson(refused.stdout)).toMatchObject({ error: { code: 'server-login-pending' } });
      const forced = await agyctl(
        ['server', 'install', b.v2.file, '--sha256', b.v2.sum, '--prefix', prefix, '--force', '--no-prove'],
        sb,
        { env },
      );
      expect(forced.exitCode, forced.stderr).toBe(0);
    } finally {
      await agyctl(['login', 'cancel'], sb, { env });
    }
  }, 240_000);
});
