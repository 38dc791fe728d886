/**
 * An install that is killed or interrupted leaves the previous version in
 * use and no partial version: SIGKILL and Ctrl-C while it unpacks, SIGKILL
 * at points spread over a whole install (the switch among them); the next
 * `server` command removes a killed install's staging directory. And an
 * archive larger than a small tmpfs: a zip refused from its central
 * directory before any write, a tar.gz stopped when it outruns the space.
 *
 * @module-tag root
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox, simPath, spawnAgyctl } from '../../helpers/cli.js';
import { requireRoot } from '../../helpers/os-user.js';
import { fakeBuild, sha256Of, writeTarGz, writeZip } from '../../helpers/server-archive.js';
import { until } from '../../helpers/until.js';

requireRoot('the server crash tests (they mount a tmpfs)');

let sb: Sandbox;
let prefix: string;
let store: string;
beforeEach(() => {
  sb = makeSandbox();
  prefix = path.join(sb.root, 'servers');
  store = path.join(prefix, 'antigravity-acp');
});

async function installV1(): Promise<void> {
  const v1 = path.join(sb.root, 'a-1.0.0-linux-x.zip');
  writeZip(v1, fakeBuild(simPath(), { AGY_SIM_VERSION: 'build-one' }));
  const r = await agyctl(['server', 'install', v1, '--sha256', sha256Of(v1), '--prefix', prefix, '--no-prove'], sb);
  expect(r.exitCode, r.stderr).toBe(0);
}

/** A v2 whose unpacking takes a while: `zeros` bytes in one entry. */
async function bigV2(zeros: number): Promise<{ file: string; sum: string }> {
  const file = path.join(sb.root, 'a-2.0.0-linux-x.tar.gz');
  await writeTarGz(file, [...fakeBuild(simPath()), { name: 'blob', zeros }]);
  return { file, sum: sha256Of(file) };
}

const staging = (): string[] => fs.readdirSync(store).filter((n) => n.startsWith('.staging-'));

/** Bytes written so far in a staging directory. */
function stagedBytes(): number {
  return staging().reduce((sum, dir) => {
    const blob = path.join(store, dir, 'blob');
    return sum + (fs.existsSync(blob) ? fs.statSync(blob).size : 0);
  }, 0);
}

/** The current version starts: what a user relies on after a crash. */
async function currentWorks(expected: string): Promise<void> {
  const r = await agyctl(
    ['probe', '--json', '--server', `${path.join(store, 'current', 'agy_acp_server.par')} --uid=`],
    sb,
  );
  expect(r.exitCode, r.stderr).toBe(0);
  expect(parseJson(r.stdout)).toMatchObject({ probe: { agent: { version: expected } } });
}

describe('agyctl server install, killed', () => {
  it('SIGKILL while unpacking: v1 stays current and works; the next server command sweeps the staging dir', async () => {
    await installV1();
    const v2 = await bigV2(400 * 1024 * 1024);
    const child = spawnAgyctl(
      ['server', 'install', v2.file, '--sha256', v2.sum, '--prefix', prefix, '--no-prove'],
      sb,
      { timeoutMs: 120_000 },
    );
    await until('the unpack to start', 60_000, () => stagedBytes() > 1024 * 1024);
    child.kill('SIGKILL');
    await child;
    expect(staging().length).toBe(1);
    expect(fs.readlinkSync(path.join(store, 'current'))).toBe('1.0.0');
    expect(fs.existsSync(path.join(store, '2.0.0'))).toBe(false);
    await currentWorks('build-one');
    const list = await agyctl(['server', 'list', '--prefix', prefix, '--json'], sb);
    expect((parseJson(list.stdout) as { servers: Array<{ version: string }> }).servers.map((s) => s.version)).toEqual([
      '1.0.0',
    ]);
    expect(staging()).toEqual([]);
  }, 240_000);

  it('Ctrl-C while unpacking: exit 130, no staging dir, v1 current', async () => {
    await installV1();
    const v2 = await bigV2(400 * 1024 * 1024);
    const child = spawnAgyctl(
      ['server', 'install', v2.file, '--sha256', v2.sum, '--prefix', prefix, '--no-prove'],
      sb,
      { timeoutMs: 120_000 },
    );
    await until('the unpack to start', 60_000, () => stagedBytes() > 1024 * 1024);
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(staging()).toEqual([]);
    expect(fs.readlinkSync(path.join(store, 'current'))).toBe('1.0.0');
    expect(fs.existsSync(path.join(store, '2.0.0'))).toBe(false);
  }, 240_000);

  it('SIGKILL at points spread over a whole install (the switch among them): current is always a whole, working version', async () => {
    await installV1();
    const v2 = path.join(sb.root, 'a-2.0.0-linux-x.zip');
    writeZip(v2, fakeBuild(simPath(), { AGY_SIM_VERSION: 'build-two' }, 8 * 1024 * 1024));
    const args = ['server', 'install', v2, '--sha256', sha256Of(v2), '--prefix', prefix, '--no-prove'];
    const started = Date.now();
    expect((await agyctl(args, sb)).exitCode).toBe(0);
    const whole = Date.now() - started;
    const reset = async (): Promise<void> => {
      await agyctl(['server', 'use', '1.0.0', '--prefix', prefix, '--no-prove'], sb);
      await agyctl(['server', 'remove', '2.0.0', '--prefix', prefix], sb);
    };
    await reset();
    const seen = new Set<string>();
    for (let i = 1; i <= 6; i += 1) {
      const child = spawnAgyctl(args, sb);
      await new Promise((r) => setTimeout(r, (whole * i) / 7));
      child.kill('SIGKILL');
      await child;
      const current = fs.readlinkSync(path.join(store, 'current'));
      seen.add(current);
      expect(['1.0.0', '2.0.0']).toContain(current);
      await currentWorks(current === '1.0.0' ? 'build-one' : 'build-two');
      const list = parseJson((await agyctl(['server', 'list', '--prefix', prefix, '--json'], sb)).stdout) as {
        servers: Array<{ version: string; current: boolean }>;
      };
      expect(list.servers.find((s) => s.current)?.version).toBe(current);
      expect(fs.readdirSync(store).filter((n) => n.startsWith('.staging-') || n.startsWith('.current-'))).toEqual([]);
      await reset();
    }
    expect(seen.has('1.0.0')).toBe(true);
  }, 240_000);
});

describe('agyctl server, after a switch killed between its two steps', () => {
  it('a half-made `current` link and a staging dir are swept by the next command; current is unchanged', async () => {
    await installV1();
    // What a kill leaves between the new link's creation and its rename over `current`, and mid-unpack.
    fs.symlinkSync('2.0.0', path.join(store, '.current-99999-deadbeef'));
    fs.mkdirSync(path.join(store, '.staging-abcdef'));
    fs.writeFileSync(path.join(store, '.staging-abcdef', 'agy_acp_server.par'), 'partial');
    const r = await agyctl(['server', 'status', '--prefix', prefix, '--json'], sb);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ status: { installed: { version: '1.0.0' }, reported: 'build-one' } });
    expect(fs.readdirSync(store).filter((n) => n.startsWith('.current-') || n.startsWith('.staging-'))).toEqual([]);
    expect(fs.readlinkSync(path.join(store, 'current'))).toBe('1.0.0');
  }, 120_000);
});

describe('agyctl server install on a small filesystem (tmpfs)', () => {
  let mount: string;
  beforeEach(() => {
    mount = path.join(sb.root, 'small');
    fs.mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m,mode=0755', 'tmpfs', mount]);
    prefix = path.join(mount, 'servers');
    store = path.join(prefix, 'antigravity-acp');
  });
  afterEach(() => execFileSync('umount', [mount]));

  it('a zip whose entries unpack to more than the free space is refused from its central directory, before any write', async () => {
    for (const [name, entry] of [
      ['a-1.0.0-linux-x.zip', { name: 'blob', data: Buffer.alloc(64 * 1024 * 1024) }],
      ['a-1.0.1-linux-x.zip', { name: 'sparse', data: '', declaredSize: 2 ** 31 }],
    ] as const) {
      const file = path.join(sb.root, name);
      writeZip(file, [...fakeBuild(simPath()), entry]);
      const r = await agyctl(['server', 'install', file, '--sha256', sha256Of(file), '--prefix', prefix, '--json'], sb);
      expect(r.exitCode).toBe(6);
      expect(parseJson(r.stdout)).toMatchObject({ error: { code: 'server-archive-too-large' } });
      expect(fs.readdirSync(store).filter((n) => n !== '.lock')).toEqual([]);
    }
  }, 240_000);

  it('a tar.gz that outruns the free space stops, removes its staging dir and exits 6', async () => {
    const file = path.join(sb.root, 'a-1.0.0-linux-x.tar.gz');
    await writeTarGz(file, [...fakeBuild(simPath()), { name: 'blob', zeros: 64 * 1024 * 1024 }]);
    const r = await agyctl(['server', 'install', file, '--sha256', sha256Of(file), '--prefix', prefix, '--json'], sb);
    expect(r.exitCode).toBe(6);
    expect(parseJson(r.stdout)).toMatchObject({ error: { code: 'server-archive-too-large' } });
    expect(fs.readdirSync(store).filter((n) => n !== '.lock')).toEqual([]);
  }, 240_000);
});
