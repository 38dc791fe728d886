/**
 * util/os: the pid lock every lock file uses (backup's run lock, the login
 * start claim) and the one file hash, at their edges: a live holder keeps
 * the lock, a dead or half-written one is judged by the same rules, release
 * never removes another's lock, and a hash never reads through a link or a
 * FIFO.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256, sha256File, sha256FileAsync } from '../../src/util/os/file-hash.js';
import { holderLine, parseHolderLine, takePidLock } from '../../src/util/os/pid-lock.js';
import { sameProcessAlive } from '../../src/util/os/process.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch('agyctl-os-guards-');

const rules = {
  content: holderLine(),
  parse: parseHolderLine,
  alive: (h: { pid: number; start: string | undefined }) => sameProcessAlive(h.pid, h.start),
};

const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

describe('takePidLock', () => {
  it('takes a free lock whole, refuses it to a second taker naming the live holder, and release frees it', () => {
    const dir = scratch.tmp();
    const file = path.join(dir, 'lock');
    const first = takePidLock(file, rules);
    expect(first.taken).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(holderLine());
    expect(fs.readdirSync(dir)).toEqual(['lock']); // no temporary name left beside it
    const second = takePidLock(file, rules);
    expect(second).toMatchObject({ taken: false, why: 'held', holder: { pid: process.pid } });
    if (first.taken) first.release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('takes over a lock whose holder is dead, and one that names nobody unless it is younger than the grace', () => {
    const dir = scratch.tmp();
    const file = path.join(dir, 'lock');
    fs.writeFileSync(file, `${deadPid()} 1\n`);
    expect(takePidLock(file, rules).taken).toBe(true);
    fs.writeFileSync(file, '');
    expect(takePidLock(file, { ...rules, unnamedGraceMs: 60_000 })).toMatchObject({ taken: false, why: 'contended' });
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    expect(takePidLock(file, rules).taken).toBe(true);
  });

  it('release leaves a lock that no longer holds what this process wrote', () => {
    const dir = scratch.tmp();
    const file = path.join(dir, 'lock');
    const lock = takePidLock(file, rules);
    fs.writeFileSync(file, 'someone else\n');
    if (lock.taken) lock.release();
    expect(fs.readFileSync(file, 'utf8')).toBe('someone else\n');
  });

  it('never follows a link at the lock name', () => {
    const dir = scratch.tmp();
    const target = path.join(dir, 'target');
    fs.symlinkSync(target, path.join(dir, 'lock'));
    const refuse = (): void => {
      throw new Error('planted');
    };
    expect(() => takePidLock(path.join(dir, 'lock'), { ...rules, inspect: refuse })).toThrow('planted');
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual(['lock']);
  });
});

describe('file hash', () => {
  it('hashes a file as its bytes, sync and async alike; a zeroed range counts as zero', async () => {
    const file = path.join(scratch.tmp(), 'f');
    const bytes = Buffer.alloc(3 << 20, 7);
    fs.writeFileSync(file, bytes);
    expect(sha256File(file)).toBe(sha256(bytes));
    expect(await sha256FileAsync(file)).toBe(sha256(bytes));
    expect(sha256File(file, { zeroed: [[0, 4]] })).toBe(sha256(Buffer.concat([Buffer.alloc(4), bytes.subarray(4)])));
  });

  it('refuses a link (unsafe-symlink) and a FIFO (not a regular file), sync and async', async () => {
    const dir = scratch.tmp();
    fs.writeFileSync(path.join(dir, 'real'), 'x');
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    spawnSync('mkfifo', [path.join(dir, 'fifo')]);
    expect(() => sha256File(path.join(dir, 'link'))).toThrow(/symbolic link/);
    await expect(sha256FileAsync(path.join(dir, 'link'))).rejects.toThrow(/symbolic link/);
    expect(() => sha256File(path.join(dir, 'fifo'))).toThrow(/not a regular file/);
    await expect(sha256FileAsync(path.join(dir, 'fifo'))).rejects.toThrow(/not a regular file/);
    expect(await sha256FileAsync(path.join(dir, 'real'))).toBe(sha256('x'));
  });
});
