/**
 * safe-fs and login's token check in a directory another user controls:
 * nothing is followed through a link, and modes are set on descriptors.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgyError } from '../../src/core/errors.js';
import { checkAndFixTokenFile } from '../../src/login/prove-credentials.js';
import { createWithContent, writeFileAtomic } from '../../src/util/os/atomic-write.js';
import {
  assertPrivateDir,
  copyFileNoFollow,
  createExclusive,
  holdsOpen,
  makePrivateDir,
  readFileNoFollow,
  sweepPrivateDirs,
  writeNewFile,
} from '../../src/util/os/safe-fs.js';
import { useScratch } from '../helpers/scratch.js';

const NOBODY = 65534;
const scratch = useScratch('agyctl-safe-fs-');

/** A state dir owned by nobody, and a root-only file outside it. */
function box(): { state: string; victim: string } {
  const root = scratch.tmp();
  const state = path.join(root, 'state');
  fs.mkdirSync(state, { mode: 0o700 });
  fs.chownSync(state, NOBODY, NOBODY);
  const victim = path.join(root, 'victim');
  fs.writeFileSync(victim, 'root data\n', { mode: 0o644 });
  fs.chmodSync(victim, 0o644);
  return { state, victim };
}

describe('login token check', () => {
  it('narrows a token to 0600 on its descriptor', () => {
    const { state } = box();
    const token = path.join(state, 'acp_token.json');
    fs.writeFileSync(token, '{}', { mode: 0o644 });
    fs.chmodSync(token, 0o644);
    const r = checkAndFixTokenFile(token);
    expect(r).toMatchObject({ regular: true, ownedByUser: true, fixedFrom: '0644', mode: '0600' });
    expect(fs.statSync(token).mode & 0o777).toBe(0o600);
  });

  it('never changes the mode or owner of what a token link points to', () => {
    const { state, victim } = box();
    const token = path.join(state, 'acp_token.json');
    fs.symlinkSync(victim, token);
    expect(checkAndFixTokenFile(token)).toMatchObject({
      regular: false,
      fixedFrom: undefined,
    });
    expect(fs.statSync(victim).mode & 0o777).toBe(0o644);
    expect(fs.statSync(victim).uid).toBe(0);
  });
});

describe('safe-fs', () => {
  it('reads, copies and creates nothing through a link', () => {
    const { state, victim } = box();
    const link = path.join(state, 'link');
    fs.symlinkSync(victim, link);
    expect(() => readFileNoFollow(link)).toThrow(AgyError);
    expect(() => copyFileNoFollow(link, path.join(state, 'copy'))).toThrow(/symbolic link/);
    expect(fs.existsSync(path.join(state, 'copy'))).toBe(false);
    expect(() => copyFileNoFollow(path.join(state, '..', 'victim'), link)).toThrow(/EEXIST/);
    expect(() => createExclusive(link)).toThrow(/EEXIST/);
    expect(fs.readFileSync(victim, 'utf8')).toBe('root data\n');
  });

  it('writeFileAtomic writes a file at the exact mode', () => {
    const { state } = box();
    const file = path.join(state, 'f.json');
    writeFileAtomic(file, 'x', { mode: 0o600 });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.chmodSync(file, 0o644);
    writeFileAtomic(file, 'y', { mode: 0o600, exactMode: true });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('holdsOpen tells whether the file that was checked is the one opened', () => {
    const { state, victim } = box();
    const file = path.join(state, 'a');
    fs.writeFileSync(file, 'a');
    const checked = fs.lstatSync(file);
    expect(holdsOpen(checked)).toBe(false);
    const fd = fs.openSync(victim, 'r'); // what a swapped-in link would have made SQLite open
    try {
      expect(holdsOpen(checked)).toBe(false);
    } finally {
      fs.closeSync(fd);
    }
    const right = fs.openSync(file, 'r');
    try {
      expect(holdsOpen(checked)).toBe(true);
    } finally {
      fs.closeSync(right);
    }
  });

  it("sweeps private dirs of killed runs only (pid gone), never a live run's", () => {
    const { state } = box();
    const dead = spawnSync('true').pid!;
    const mine = makePrivateDir(state, 'restore');
    for (const pid of [dead, 1]) fs.mkdirSync(path.join(state, `.agyctl-restore-${pid}-abc123`));
    expect(sweepPrivateDirs(state, 'restore')).toEqual([`.agyctl-restore-${dead}-abc123`]);
    expect(fs.readdirSync(state).sort()).toEqual([path.basename(mine), '.agyctl-restore-1-abc123'].sort());
  });

  it('a work dir swapped for a link or for a directory of another user is refused; new files never reuse a name', () => {
    const { state, victim } = box();
    const work = path.join(path.dirname(state), 'work');
    fs.mkdirSync(work, { mode: 0o700 });
    expect(() => assertPrivateDir(work)).not.toThrow();
    fs.renameSync(work, `${work}.moved`);
    fs.symlinkSync(path.dirname(victim), work);
    expect(() => assertPrivateDir(work)).toThrow(/symbolic link/);
    fs.rmSync(work);
    expect(() => assertPrivateDir(state)).toThrow(/no longer the private directory/); // nobody's
    const link = path.join(state, 'x.meta');
    fs.symlinkSync(victim, link);
    expect(() => writeNewFile(link, Buffer.from('meta'))).toThrow(/EEXIST/);
    expect(fs.readFileSync(victim, 'utf8')).toBe('root data\n');
  });
});

describe('createWithContent (the login start claim)', () => {
  it('creates the file with its content whole, or leaves what is there; no temporary file is left either way', () => {
    const dir = scratch.tmp();
    const file = path.join(dir, 'starting');
    expect(createWithContent(file, '4242\n')).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe('4242\n');
    expect(createWithContent(file, '99\n')).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('4242\n');
    expect(fs.readdirSync(dir)).toEqual(['starting']);
  });

  it('never follows a link at the name, dangling or not', () => {
    const dir = scratch.tmp();
    const target = path.join(dir, 'target');
    const file = path.join(dir, 'starting');
    fs.symlinkSync(target, file);
    expect(createWithContent(file, '1\n')).toBe(false);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readdirSync(dir).sort()).toEqual(['starting']);
  });
});
