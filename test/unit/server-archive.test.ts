/** The pure parts of `agyctl server`: sums, versions, link targets, entry names, the zip central directory, status findings. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgyError } from '../../src/core/errors.js';
import { findInstalledServer, installedCommand } from '../../src/profiles/installed-server.js';
import { chooseCommand, chooseVersion, sumFromFile, versionFromName } from '../../src/server/archive-facts.js';
import { versionsDiffer } from '../../src/server/manage.js';
import { preflight } from '../../src/server/preflight.js';
import { checkLinkTarget, entryParts, UnpackTarget } from '../../src/server/unpack-target.js';
import { readZipDirectory, unpackedSize } from '../../src/server/zip.js';
import { writeZip } from '../helpers/server-archive.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-unit-server-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const exitOf = (fn: () => unknown): number | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof AgyError ? err.exit : -1;
  }
  return undefined;
};

describe('archive facts', () => {
  it('takes the version from a published name', () => {
    expect(versionFromName('/x/antigravity-acp-1.3.0-linux-x86_64.zip')).toBe('1.3.0');
    expect(versionFromName('agy-1.1.1-linux-x64.tar.gz')).toBe('1.1.1');
    expect(versionFromName('build.zip')).toBeUndefined();
  });

  it('prefers --version, then the name, then agent.json; none is exit 2 naming --version', () => {
    expect(chooseVersion('9.9.9', 'a-1.0.0-linux-x.zip', { version: '2.0.0' })).toBe('9.9.9');
    expect(chooseVersion(undefined, 'a-1.0.0-linux-x.zip', { version: '2.0.0' })).toBe('1.0.0');
    expect(chooseVersion(undefined, 'build.zip', { version: '2.0.0' })).toBe('2.0.0');
    expect(exitOf(() => chooseVersion(undefined, 'build.zip', undefined))).toBe(2);
    expect(exitOf(() => chooseVersion('../x', 'build.zip', undefined))).toBe(2);
    expect(exitOf(() => chooseVersion('current', 'build.zip', undefined))).toBe(2);
  });

  it('reads the sum for the archive from a SHA256SUMS file', () => {
    const a = 'a'.repeat(64);
    const b = 'B'.repeat(64);
    expect(sumFromFile(`${a}  other.zip\n${b} *dir/build.zip\n`, '/x/build.zip')).toBe('b'.repeat(64));
    expect(exitOf(() => sumFromFile(`${a}  other.zip\n`, 'build.zip'))).toBe(2);
  });

  it("keeps agent.json's command inside the archive, else the known layout", () => {
    expect(chooseCommand(undefined)).toEqual({ cmd: 'agy_acp_server.par', args: ['--uid='] });
    expect(chooseCommand({ cmd: './pkg/agy_acp_server.par', args: [] })).toEqual({
      cmd: 'pkg/agy_acp_server.par',
      args: [],
    });
    expect(exitOf(() => chooseCommand({ cmd: '../../bin/sh' }))).toBe(2);
    expect(exitOf(() => chooseCommand({ cmd: '/bin/sh' }))).toBe(2);
  });
});

describe('preflight', () => {
  it('refuses musl and another architecture with exit 2', () => {
    expect(preflight({ arch: 'x64', glibc: '2.36', agentListsPlatform: false })).toEqual({
      arch: 'x64',
      glibc: '2.36',
    });
    expect(exitOf(() => preflight({ arch: 'x64', glibc: undefined, agentListsPlatform: false }))).toBe(2);
    expect(exitOf(() => preflight({ arch: 'riscv64', glibc: '2.36', agentListsPlatform: false }))).toBe(2);
    expect(preflight({ arch: 'arm64', glibc: '2.36', agentListsPlatform: true }).arch).toBe('arm64');
  });
});

describe('entry names and link targets', () => {
  it('refuses names that leave the directory', () => {
    expect(entryParts('./a/b/')).toEqual(['a', 'b']);
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'a\\b', 'a/..'])
      expect(
        exitOf(() => entryParts(bad)),
        bad,
      ).toBe(6);
  });

  it('allows links inside, refuses links out and links that a link could turn outward', () => {
    const root = '/r';
    expect(() => checkLinkTarget(root, '/r/bin/server', '../agy_acp_server.par')).not.toThrow();
    expect(() => checkLinkTarget(root, '/r/lib/a', 'b/c')).not.toThrow();
    for (const bad of ['../../etc', '/etc', 'x/../..', 'x/../y', ''])
      expect(
        exitOf(() => checkLinkTarget(root, '/r/bin/server', bad)),
        bad,
      ).toBe(6);
  });
});

describe('zip central directory', () => {
  it('lists entries, kinds, modes and declared sizes before anything is written', () => {
    const file = path.join(tmp(), 'a.zip');
    writeZip(file, [
      { name: 'd', type: 'dir' },
      { name: 'd/f', mode: 0o750, data: 'hello' },
      { name: 'l', type: 'symlink', link: 'd/f' },
      { name: 'huge', data: '', declaredSize: 2 ** 31 },
    ]);
    const fd = fs.openSync(file, 'r');
    try {
      const entries = readZipDirectory(fd, fs.fstatSync(fd).size);
      expect(entries.map((e) => [e.name, e.kind, e.mode])).toEqual([
        ['d/', 'dir', 0o755],
        ['d/f', 'file', 0o750],
        ['l', 'symlink', 0o644],
        ['huge', 'file', 0o644],
      ]);
      expect(unpackedSize(entries)).toBe(5 + 3 + 2 ** 31);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('refuses a zip without its end record (truncated)', () => {
    const file = path.join(tmp(), 'a.zip');
    writeZip(file, [{ name: 'f', data: 'x' }]);
    fs.truncateSync(file, fs.statSync(file).size - 10);
    const fd = fs.openSync(file, 'r');
    try {
      expect(exitOf(() => readZipDirectory(fd, fs.fstatSync(fd).size))).toBe(6);
    } finally {
      fs.closeSync(fd);
    }
  });
});

describe('server status', () => {
  it('is a finding only when the reported text names another version number', () => {
    expect(versionsDiffer('1.3.0', 'agy_acp_server_20260818_01_RC01')).toBe(false);
    expect(versionsDiffer('1.3.0', 'agy_acp_server_1.3.0_RC01')).toBe(false);
    expect(versionsDiffer('1.3.0', 'agy_acp_server_1.2.1_RC01')).toBe(true);
    expect(versionsDiffer('1.3.0', null)).toBe(false);
  });
});

describe('where agyctl finds an installed server', () => {
  function installFake(prefix: string, version: string): string {
    const dir = path.join(prefix, 'antigravity-acp', version);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'agy_acp_server.par'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(
      path.join(prefix, 'antigravity-acp', `.${version}.json`),
      JSON.stringify({ cmd: 'agy_acp_server.par', args: ['--uid='], installedAt: '', sha256: '', bytes: 0 }),
    );
    fs.symlinkSync(version, path.join(prefix, 'antigravity-acp', 'current'));
    return path.join(dir, 'agy_acp_server.par');
  }

  it("uses the caller's current install ($XDG_DATA_HOME)", () => {
    const data = tmp();
    const par = installFake(path.join(data, 'agyctl', 'servers'), '1.0.0');
    expect(findInstalledServer('antigravity-acp', { HOME: tmp(), XDG_DATA_HOME: data })).toEqual({
      file: par,
      args: ['--uid='],
      version: '1.0.0',
    });
  });

  it('refuses a record whose command leaves its version directory', () => {
    const prefix = tmp();
    installFake(prefix, '1.0.0');
    fs.writeFileSync(
      path.join(prefix, 'antigravity-acp', '.1.0.0.json'),
      JSON.stringify({ cmd: '../../../bin/sh', args: [] }),
    );
    expect(installedCommand(prefix, 'antigravity-acp')).toBeUndefined();
  });
});

describe('UnpackTarget', () => {
  const entry = (name: string, kind: 'file' | 'dir' | 'symlink' | 'hardlink', mode = 0o644, link?: string) => ({
    name,
    kind,
    mode,
    ...(link === undefined ? {} : { link }),
  });
  async function* bytes(text: string): AsyncGenerator<Buffer> {
    yield Buffer.from(text);
  }

  it("keeps modes, less group and other write for root's installs, and makes links last", async () => {
    const root = tmp();
    const t = new UnpackTarget(root, { dropGroupOtherWrite: true, signal: new AbortController().signal });
    t.directory(entry('d', 'dir', 0o777));
    await t.file(entry('d/f', 'file', 0o775), 5, bytes('hello'));
    t.link(entry('d/hard', 'hardlink', 0o644, 'd/f'));
    t.link(entry('top', 'symlink', 0o777, 'd/f'));
    t.finish();
    expect(fs.statSync(path.join(root, 'd')).mode & 0o777).toBe(0o755);
    expect(fs.statSync(path.join(root, 'd', 'f')).mode & 0o777).toBe(0o755);
    expect(fs.statSync(path.join(root, 'd', 'hard')).ino).toBe(fs.statSync(path.join(root, 'd', 'f')).ino);
    expect(fs.readlinkSync(path.join(root, 'top'))).toBe('d/f');
  });

  it('refuses a hard link to what the archive did not give, an entry twice, and content longer or shorter than declared', async () => {
    const root = tmp();
    const t = new UnpackTarget(root, { dropGroupOtherWrite: false, signal: new AbortController().signal });
    t.link(entry('h', 'hardlink', 0o644, 'etc/passwd'));
    expect(exitOf(() => t.finish())).toBe(6);
    const u = new UnpackTarget(tmp(), { dropGroupOtherWrite: false, signal: new AbortController().signal });
    await u.file(entry('f', 'file'), 1, bytes('x'));
    await expect(u.file(entry('f', 'file'), 1, bytes('x'))).rejects.toMatchObject({ exit: 6 });
    await expect(u.file(entry('g', 'file'), 1, bytes('xy'))).rejects.toMatchObject({ exit: 6 });
    await expect(u.file(entry('h', 'file'), 3, bytes('xy'))).rejects.toMatchObject({ exit: 6 });
  });
});

describe('UnpackTarget, a link and a directory of one name', () => {
  it('is refused, not a bug', async () => {
    const t = new UnpackTarget(tmp(), { dropGroupOtherWrite: false, signal: new AbortController().signal });
    t.link({ name: 'a', kind: 'symlink', mode: 0o777, link: 'b' });
    t.directory({ name: 'b', kind: 'dir', mode: 0o755 });
    async function* one(): AsyncGenerator<Buffer> {
      yield Buffer.from('x');
    }
    await t.file({ name: 'a/f', kind: 'file', mode: 0o644 }, 1, one());
    expect(exitOf(() => t.finish())).toBe(6);
  });
});
