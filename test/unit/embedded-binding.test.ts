/**
 * The executable's SQLite addon, written out to load: content-addressed,
 * atomic, never through a link, shared by concurrent writers; and when no
 * directory can hold it, or the bytes cannot load, one error naming the fix.
 * Runs on the npm package's own addon (built for this Node), the same bytes
 * the executable carries for its Node.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bindingDirs, loadEmbeddedBinding } from '../../src/backup/embedded-binding.js';
import { AgyError } from '../../src/core/errors.js';
import { contentAddressedFile } from '../../src/util/content-file.js';
import { sha256 } from '../../src/util/os/file-hash.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-binding-');
const ADDON = path.join(
  path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')),
  'build',
  'Release',
  'better_sqlite3.node',
);

describe('contentAddressedFile', () => {
  it('writes the bytes once under their hash, 0500, in a private directory it creates', () => {
    const dir = path.join(tmp(), 'cache', 'agyctl');
    const bytes = Buffer.from('addon bytes');
    const file = contentAddressedFile(dir, 'x', '.node', bytes);
    expect(path.basename(file)).toBe(`x-${sha256(bytes).slice(0, 32)}.node`);
    expect(fs.readFileSync(file)).toEqual(bytes);
    expect(fs.statSync(file).mode & 0o777).toBe(0o500);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const before = fs.statSync(file).ino;
    expect(contentAddressedFile(dir, 'x', '.node', bytes)).toBe(file);
    expect(fs.statSync(file).ino).toBe(before); // reused, not rewritten
    expect(fs.readdirSync(dir)).toEqual([path.basename(file)]); // no temporary file left
  });

  it('replaces a link or a damaged file at its name, never writing through the link', () => {
    const dir = path.join(tmp(), 'agyctl');
    fs.mkdirSync(dir, { mode: 0o700 });
    const bytes = Buffer.from('the real addon');
    const name = `x-${sha256(bytes).slice(0, 32)}.node`;
    const victim = path.join(tmp(), 'victim');
    fs.writeFileSync(victim, 'not yours');
    fs.symlinkSync(victim, path.join(dir, name));
    const file = contentAddressedFile(dir, 'x', '.node', bytes);
    expect(fs.lstatSync(file).isFile()).toBe(true);
    expect(fs.readFileSync(file)).toEqual(bytes);
    expect(fs.readFileSync(victim, 'utf8')).toBe('not yours');
    fs.chmodSync(file, 0o600);
    fs.writeFileSync(file, 'torn');
    expect(fs.readFileSync(contentAddressedFile(dir, 'x', '.node', bytes))).toEqual(bytes);
  });

  it('refuses a directory that is a link or writable by others', () => {
    const base = tmp();
    const real = path.join(base, 'real');
    fs.mkdirSync(real, { mode: 0o700 });
    fs.symlinkSync(real, path.join(base, 'link'));
    expect(() => contentAddressedFile(path.join(base, 'link'), 'x', '.node', Buffer.from('a'))).toThrow(/link/);
    fs.chmodSync(real, 0o777);
    expect(() => contentAddressedFile(real, 'x', '.node', Buffer.from('a'))).toThrow(/private directory/);
    expect(fs.readdirSync(real)).toEqual([]);
  });
});

describe('bindingDirs', () => {
  it('prefers AGYCTL_CACHE_DIR, then the XDG cache, ~/.cache, the unit runtime dir, TMPDIR, /tmp, /var/tmp', () => {
    expect(
      bindingDirs(
        { AGYCTL_CACHE_DIR: '/c', XDG_CACHE_HOME: '/x', HOME: '/h', RUNTIME_DIRECTORY: '/run/a:/run/b', TMPDIR: '/t' },
        7,
      ),
    ).toEqual([
      '/c',
      '/x/agyctl',
      '/h/.cache/agyctl',
      '/run/a/agyctl',
      '/t/agyctl-7',
      '/tmp/agyctl-7',
      '/var/tmp/agyctl-7',
    ]);
    expect(bindingDirs({}, 0)).toEqual(['/tmp/agyctl-0', '/var/tmp/agyctl-0', '/var/cache/agyctl']);
  });

  it('skips what is unset or relative', () => {
    expect(bindingDirs({ HOME: 'rel', XDG_CACHE_HOME: '' }, 7)).toEqual(['/tmp/agyctl-7', '/var/tmp/agyctl-7']);
  });
});

describe('loadEmbeddedBinding', () => {
  const bytes = (): Buffer => fs.readFileSync(ADDON);

  it('loads the addon from the first directory that takes it, passing over one that cannot be made', () => {
    const blocked = path.join(tmp(), 'a-file');
    fs.writeFileSync(blocked, '');
    const dir = path.join(tmp(), 'cache');
    const loaded = loadEmbeddedBinding(bytes(), [path.join(blocked, 'agyctl'), dir]);
    expect(path.dirname(loaded.path)).toBe(dir);
    expect(typeof (loaded.addon as { Database?: unknown }).Database).toBe('function');
  });

  it('names the directories tried and the fix when none can hold it', () => {
    const blocked = path.join(tmp(), 'a-file');
    fs.writeFileSync(blocked, '');
    const err = catchError(() => loadEmbeddedBinding(bytes(), [path.join(blocked, 'one'), path.join(blocked, 'two')]));
    expect(err.code).toBe('sqlite-binding');
    expect(err.exit).toBe(1);
    expect(err.message).toContain(`${path.join(blocked, 'one')}: ENOTDIR`);
    expect(err.message).not.toContain('\n');
    expect(err.hint).toMatch(/AGYCTL_CACHE_DIR/);
  });

  it('passes over a cache dir below a directory others can write (not sticky), and says so when none is left', () => {
    const open = path.join(tmp(), 'open');
    fs.mkdirSync(path.join(open, 'cache'), { recursive: true });
    fs.chmodSync(open, 0o777); // anyone may rename cache/ away and put their own in its place
    const planted = path.join(open, 'cache', 'agyctl');
    const dir = path.join(tmp(), 'cache');
    const loaded = loadEmbeddedBinding(bytes(), [planted, dir]);
    expect(path.dirname(loaded.path)).toBe(dir);
    expect(fs.readdirSync(path.join(open, 'cache'))).toEqual([]); // nothing made below the open directory
    const err = catchError(() => loadEmbeddedBinding(bytes(), [planted]));
    expect(err.code).toBe('sqlite-binding');
    expect(err.message).toContain(`${open} can be written by users other than root`);
    expect(err.message).not.toContain('\n');
    expect(err.hint).toMatch(/AGYCTL_CACHE_DIR .*no one else can write/);
  });

  it('says the executable is damaged when the bytes it carries do not load', () => {
    const damaged = bytes();
    damaged.write('\0\0\0\0', 0); // no ELF magic
    const err = catchError(() => loadEmbeddedBinding(damaged, [path.join(tmp(), 'cache')]));
    expect(err.code).toBe('sqlite-binding');
    expect(err.message).toMatch(/invalid ELF header/);
    expect(err.hint).toMatch(/SHA256SUMS/);
  });
});

function catchError(fn: () => unknown): AgyError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AgyError) return err;
    throw err;
  }
  throw new Error('expected an AgyError');
}
