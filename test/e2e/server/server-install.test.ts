/**
 * `agyctl server install` on archives the test makes: a fake build (the
 * simulator behind an `agy_acp_server.par` launcher that needs its
 * `localharness_external`) as zip and tar.gz; a wrong sum; hostile archives;
 * a build that does not start, rolled back; and where agyctl finds the
 * installed server afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox, simPath } from '../../helpers/cli.js';
import { type FakeEntry, fakeBuild, sha256Of, writeTarGz, writeZip } from '../../helpers/server-archive.js';

let sb: Sandbox;
let prefix: string;
beforeEach(() => {
  sb = makeSandbox();
  prefix = path.join(sb.root, 'servers');
});

const store = (): string => path.join(prefix, 'antigravity-acp');

function zipArchive(name: string, entries: FakeEntry[]): { file: string; sum: string } {
  const file = path.join(sb.root, name);
  writeZip(file, entries);
  return { file, sum: sha256Of(file) };
}

const install = (file: string, sum: string, ...more: string[]) =>
  agyctl(['server', 'install', file, '--sha256', sum, '--prefix', prefix, '--json', ...more], sb, {
    timeoutMs: 90_000,
  });

/** Every path under the store, with its kind: what an install left. */
function listing(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).map(String).sort();
}

describe('agyctl server install', () => {
  it('installs a zip, proves it, lists it, and `current` points at it', async () => {
    const a = zipArchive(
      'antigravity-acp-1.2.1-linux-x86_64.zip',
      fakeBuild(simPath(), { AGY_SIM_VERSION: 'agy_acp_server_1.2.1_RC01' }),
    );
    const r = await install(a.file, a.sum);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const doc = parseJson(r.stdout) as { install: { version: string; proof: Array<{ step: string; exit: number }> } };
    expect(doc.install.version).toBe('1.2.1');
    expect(doc.install.proof.map((s) => s.step)).toEqual(['initialize']);
    expect(fs.readlinkSync(path.join(store(), 'current'))).toBe('1.2.1');
    const par = fs.statSync(path.join(store(), '1.2.1', 'agy_acp_server.par'));
    expect(par.mode & 0o777).toBe(0o755);
    const list = parseJson((await agyctl(['server', 'list', '--prefix', prefix, '--json'], sb)).stdout);
    expect(list).toMatchObject({
      schemaVersion: expect.any(Number),
      servers: [
        {
          name: 'antigravity-acp',
          version: '1.2.1',
          current: true,
          sha256: a.sum,
          bytes: expect.any(Number),
          installedAt: expect.any(String),
          path: path.join(store(), '1.2.1'),
          cmd: 'agy_acp_server.par',
          args: ['--uid='],
        },
      ],
    });
    const status = await agyctl(['server', 'status', '--prefix', prefix, '--json'], sb);
    expect(status.exitCode).toBe(0);
    expect(parseJson(status.stdout)).toMatchObject({
      status: { reported: 'agy_acp_server_1.2.1_RC01', mismatch: false },
    });
  }, 240_000);

  it('installs a tar.gz, taking the version from --sums and --version', async () => {
    const file = path.join(sb.root, 'build.tar.gz');
    await writeTarGz(file, [
      { name: 'bin', type: 'dir' },
      ...fakeBuild(simPath()),
      { name: 'bin/server', type: 'symlink', link: '../agy_acp_server.par' },
    ]);
    const sums = path.join(sb.root, 'SHA256SUMS');
    fs.writeFileSync(sums, `${'0'.repeat(64)}  other.zip\n${sha256Of(file)}  build.tar.gz\n`);
    const r = await agyctl(
      ['server', 'install', file, '--sums', sums, '--version', '1.3.0', '--prefix', prefix, '--no-prove'],
      sb,
    );
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(fs.readlinkSync(path.join(store(), '1.3.0', 'bin', 'server'))).toBe('../agy_acp_server.par');
    expect(r.stdout).toContain('not proven (--no-prove)');
  }, 240_000);

  it('a status whose server names another version number is a finding (exit 6)', async () => {
    const a = zipArchive('x-1.2.1-linux-x.zip', fakeBuild(simPath(), { AGY_SIM_VERSION: 'agy_acp_server_1.3.0_RC01' }));
    expect((await install(a.file, a.sum, '--no-prove')).exitCode).toBe(0);
    const status = await agyctl(['server', 'status', '--prefix', prefix], sb);
    expect(status.exitCode).toBe(6);
    expect(status.stdout).toContain('finding: the server reports another version');
  }, 240_000);

  it('without a version anywhere: exit 2 naming --version', async () => {
    const a = zipArchive('build.zip', fakeBuild(simPath()));
    const r = await install(a.file, a.sum);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('--version');
    expect(listing(store())).toEqual([]);
  }, 240_000);

  it('takes the command and the version from agent.json', async () => {
    const entries = [
      { name: 'pkg', type: 'dir' as const },
      ...fakeBuild(simPath()).map((e) => ({ ...e, name: `pkg/${e.name}` })),
    ];
    const a = zipArchive('build.zip', entries);
    const agentJson = path.join(sb.root, 'agent.json');
    fs.writeFileSync(
      agentJson,
      JSON.stringify({
        id: 'antigravity-acp',
        version: '2.0.0',
        distribution: {
          binary: {
            'linux-x86_64': { archive: 'https://x/build.zip', cmd: './pkg/agy_acp_server.par', args: ['--uid='] },
          },
        },
      }),
    );
    const r = await install(a.file, a.sum, '--agent-json', agentJson);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(store(), '.2.0.0.json'), 'utf8'))).toMatchObject({
      cmd: 'pkg/agy_acp_server.par',
      args: ['--uid='],
    });
  }, 240_000);

  it('a wrong sum changes nothing: exit 6', async () => {
    const a = zipArchive('x-1.0.0-linux-x.zip', fakeBuild(simPath()));
    const r = await install(a.file, 'f'.repeat(64));
    expect(r.exitCode).toBe(6);
    expect(parseJson(r.stdout)).toMatchObject({ error: { code: 'server-archive-sha256-mismatch' } });
    expect(listing(store()).filter((n) => n !== '.lock')).toEqual([]);
  }, 240_000);

  it('a truncated zip is refused (exit 6) and leaves nothing', async () => {
    const a = zipArchive('x-1.0.0-linux-x.zip', fakeBuild(simPath()));
    const bytes = fs.readFileSync(a.file);
    fs.writeFileSync(a.file, bytes.subarray(0, bytes.length - 30));
    const r = await install(a.file, sha256Of(a.file));
    expect(r.exitCode).toBe(6);
    expect(listing(store())).toEqual([]);
  }, 240_000);

  it('a truncated tar.gz is refused (exit 6) and leaves nothing', async () => {
    const file = path.join(sb.root, 'x-1.0.0-linux-x.tar.gz');
    await writeTarGz(file, fakeBuild(simPath(), {}, 200_000));
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const r = await install(file, sha256Of(file));
    expect(r.exitCode).toBe(6);
    expect(listing(store())).toEqual([]);
  }, 240_000);

  const hostile: Array<[string, FakeEntry]> = [
    ['zip-slip', { name: '../../escaped', data: 'x' }],
    ['an absolute path', { name: '/tmp/agyctl-absolute-escape', data: 'x' }],
    ['a link out', { name: 'out', type: 'symlink', link: '../../../etc' }],
    ['an absolute link', { name: 'out', type: 'symlink', link: '/etc/passwd' }],
    ['a link that turns outward', { name: 'out', type: 'symlink', link: 'bin/../..' }],
    ['a setuid file', { name: 'suid', mode: 0o4755, data: 'x' }],
    ['a setgid file', { name: 'sgid', mode: 0o2755, data: 'x' }],
    ['a device file', { name: 'dev', type: 'chardev' }],
  ];
  for (const [what, entry] of hostile) {
    for (const format of ['zip', 'tar.gz'] as const) {
      it(`a ${format} with ${what} is refused (exit 6) and leaves nothing`, async () => {
        const file = path.join(sb.root, `x-1.0.0-linux-x.${format}`);
        const entries = [...fakeBuild(simPath()), entry];
        if (format === 'zip') writeZip(file, entries);
        else await writeTarGz(file, entries);
        const r = await install(file, sha256Of(file));
        expect(r.exitCode).toBe(6);
        expect(parseJson(r.stdout)).toMatchObject({ error: { code: 'server-archive-refused' } });
        expect(listing(store())).toEqual([]);
        expect(fs.existsSync(path.join(sb.root, 'escaped'))).toBe(false);
        expect(fs.existsSync('/tmp/agyctl-absolute-escape')).toBe(false);
      });
    }
  }

  it('an archive without the server command is refused (exit 6)', async () => {
    const a = zipArchive('x-1.0.0-linux-x.zip', [{ name: 'README', data: 'no server here' }]);
    const r = await install(a.file, a.sum);
    expect(r.exitCode).toBe(6);
    expect(listing(store())).toEqual([]);
  }, 240_000);

  it('a build that does not start is rolled back: exit 4, the previous version is back', async () => {
    const good = zipArchive('x-1.0.0-linux-x.zip', fakeBuild(simPath()));
    expect((await install(good.file, good.sum)).exitCode).toBe(0);
    const bad = zipArchive('x-1.1.0-linux-x.zip', fakeBuild(simPath(), { AGY_SIM_EXIT_AT_START: '70' }));
    const r = await install(bad.file, bad.sum);
    expect(r.exitCode).toBe(4);
    const err = (parseJson(r.stdout) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('server-proof-failed');
    expect(err.message).toContain('initialize');
    expect(err.message).toContain('version 1.0.0 is back in use');
    expect(fs.readlinkSync(path.join(store(), 'current'))).toBe('1.0.0');
    expect(fs.existsSync(path.join(store(), '1.1.0'))).toBe(false);
  }, 240_000);

  it('a build without its localharness_external beside it fails its proof and is rolled back', async () => {
    const a = zipArchive('x-1.0.0-linux-x.zip', fakeBuild(simPath()).slice(0, 1));
    const r = await install(a.file, a.sum);
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toContain('no version was installed before');
    expect(fs.existsSync(path.join(store(), 'current'))).toBe(false);
  }, 240_000);

  it("agyctl finds the installed server: --server first, then the caller's install, then PATH", async () => {
    const data = path.join(sb.root, 'data');
    const userPrefix = path.join(data, 'agyctl', 'servers');
    const a = zipArchive('x-1.0.0-linux-x.zip', fakeBuild(simPath(), { AGY_SIM_VERSION: 'installed-build' }));
    const r = await agyctl(['server', 'install', a.file, '--sha256', a.sum, '--prefix', userPrefix, '--no-prove'], sb);
    expect(r.exitCode).toBe(0);
    const env = { AGYCTL_SERVER: '', XDG_DATA_HOME: data };
    const probe = parseJson((await agyctl(['probe', '--json'], sb, { env })).stdout) as {
      probe: { agent: { version: string }; server: string };
    };
    expect(probe.probe.agent.version).toBe('installed-build');
    expect(probe.probe.server).toBe(
      `${path.join(userPrefix, 'antigravity-acp', '1.0.0', 'agy_acp_server.par')} --uid=`,
    );
    const given = parseJson(
      (await agyctl(['probe', '--json', '--server', `node ${simPath()}`], sb, { env })).stdout,
    ) as { probe: { agent: { version: string } } };
    expect(given.probe.agent.version).not.toBe('installed-build');
  }, 240_000);
});
