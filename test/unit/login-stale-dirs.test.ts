/**
 * The sweep of agyctl-login-* dirs (left by killed logins) removes only what is ours
 * and abandoned: our uid, our naming, a real directory, its owner gone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordOwner, sweepStaleLoginDirs } from '../../src/login/shims.js';
import { processStart } from '../../src/util/os/process.js';

let root: string | undefined;
afterEach(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function dir(name: string, owner?: string): string {
  const d = path.join(root!, name);
  fs.mkdirSync(d);
  if (owner !== undefined) fs.writeFileSync(path.join(d, 'owner'), owner);
  return d;
}

describe('sweepStaleLoginDirs', () => {
  it('removes dirs whose owner process is gone (or a reused pid), and nothing else', () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-sweep-'));
    const gone = dir('agyctl-login-Gone01', '2147483000 12345\n');
    const reused = dir('agyctl-login-Reuse1', `${process.pid} 1\n`);
    const alive = dir('agyctl-login-Alive1', `${process.pid} ${processStart(process.pid)}\n`);
    const mine = dir('agyctl-login-Mine01');
    recordOwner(mine);
    const other = dir('agyctl-probe-Gone01', '2147483000 1\n');
    const badName = dir('agyctl-login-toolong1', '2147483000 1\n');
    const unowned = dir('agyctl-login-NoOwnr');
    // A planted link with our naming, pointing at a dir that must survive.
    const target = dir('precious', '2147483000 1\n');
    fs.symlinkSync(target, path.join(root, 'agyctl-login-Link01'));
    expect(sweepStaleLoginDirs(root).sort()).toEqual([gone, reused].sort());
    for (const kept of [alive, mine, other, badName, unowned, target, path.join(root, 'agyctl-login-Link01')])
      expect(fs.existsSync(kept), kept).toBe(true);
  });

  it("leaves another user's dir alone (root plants one as nobody)", () => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-sweep-'));
    const theirs = dir('agyctl-login-Their1', '2147483000 1\n');
    fs.chownSync(theirs, 65534, 65534);
    expect(sweepStaleLoginDirs(root)).toEqual([]);
    expect(fs.existsSync(theirs)).toBe(true);
  });

  it('an unowned dir (an older agyctl) goes only once it is a day old', () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-sweep-'));
    const old = dir('agyctl-login-Old001');
    expect(sweepStaleLoginDirs(root)).toEqual([]);
    expect(sweepStaleLoginDirs(root, Date.now() + 25 * 3600_000)).toEqual([old]);
  });
});
