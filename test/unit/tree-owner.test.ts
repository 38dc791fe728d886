/**
 * Whose tree a state dir is in (util/tree-owner.ts): root becomes that user
 * for the work there, and refuses (exit 2) where the owner cannot be told
 * safely. Runs as root (as CI): it hands directories to other uids.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgyError } from '../../src/core/errors.js';
import { accountOf, treeOwnerUid } from '../../src/util/os/tree-owner.js';

if (process.getuid?.() !== 0)
  throw new Error('tree-owner tests need root (as in CI): they chown directories to other uids');

const NOBODY = 65534;
const OTHER = 4242;
let root: string | undefined;
afterEach(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** root/home (nobody's) and, inside it, .gemini/antigravity-acp (nobody's). */
function tree(): { home: string; state: string } {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-owner-'));
  fs.chmodSync(root, 0o755);
  const home = path.join(root, 'home');
  const state = path.join(home, '.gemini', 'antigravity-acp');
  fs.mkdirSync(state, { recursive: true, mode: 0o700 });
  for (const d of [home, path.dirname(state), state]) fs.chownSync(d, NOBODY, NOBODY);
  return { home, state };
}

function refusal(dir: string): AgyError {
  try {
    treeOwnerUid(dir);
  } catch (err) {
    return err as AgyError;
  }
  throw new Error(`no refusal for ${dir}`);
}

describe('the owner root becomes', () => {
  it("is the state dir's owner; for one not yet created, the owner of the home it is in", () => {
    const { home, state } = tree();
    expect(treeOwnerUid(state)).toBe(NOBODY);
    expect(treeOwnerUid(path.join(home, 'not-yet', 'state'))).toBe(NOBODY);
  });

  it("is nobody for root's own tree, through a sticky /tmp", () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-owner-'));
    expect(fs.statSync(os.tmpdir()).mode & 0o1000).toBe(0o1000);
    expect(treeOwnerUid(path.join(root, 'state'))).toBeUndefined();
  });

  it('a link swapped back to a directory between its lstat and its readlink is looked at again, not a crash', () => {
    const { home, state } = tree();
    const link = path.join(root!, 'via');
    fs.symlinkSync(home, link);
    fs.lchownSync(link, NOBODY, NOBODY);
    const viaLink = path.join(link, path.relative(home, state));
    const readlink = fs.readlinkSync;
    let raced = 0;
    // The first readlink of the link fails as it does when the owner has just put a directory back (EINVAL).
    const spy = vi.spyOn(fs, 'readlinkSync').mockImplementation(((p: fs.PathLike, o?: unknown) => {
      if (p === link && raced++ === 0)
        throw Object.assign(new Error(`EINVAL: invalid argument, readlink '${link}'`), { code: 'EINVAL' });
      return readlink(p, o as BufferEncoding);
    }) as typeof fs.readlinkSync);
    try {
      expect(treeOwnerUid(viaLink)).toBe(NOBODY);
      expect(raced).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a directory on the way that others can write and that is not sticky', () => {
    const { state } = tree();
    fs.chmodSync(root!, 0o777);
    const err = refusal(state);
    expect([err.exit, err.code]).toEqual([2, 'state-dir-owner-unclear']);
    expect(err.hint).toContain(`chmod go-w ${root}`);
    fs.chmodSync(root!, 0o1777); // sticky: fine
    expect(treeOwnerUid(state)).toBe(NOBODY);
  });

  it("refuses a state dir of one user inside another's home, and a root-owned one inside a user's home", () => {
    const { state } = tree();
    fs.chownSync(state, OTHER, OTHER);
    expect(refusal(state).message).toMatch(/belongs to uid 4242, but it is inside a directory of uid 65534/);
    fs.chownSync(state, 0, 0);
    expect(refusal(state).message).toMatch(/belongs to root but is inside the home of uid 65534/);
  });

  it("follows root's links, refuses another user's link on the way", () => {
    const { home, state } = tree();
    const viaRoot = path.join(root!, 'via-root');
    fs.symlinkSync(home, viaRoot);
    expect(treeOwnerUid(path.join(viaRoot, '.gemini', 'antigravity-acp'))).toBe(NOBODY);
    const other = path.join(home, 'link');
    fs.symlinkSync(state, other);
    fs.lchownSync(other, OTHER, OTHER);
    expect(refusal(other).code).toBe('state-dir-owner-unclear');
  });

  it('refuses a uid with no account', () => {
    expect(() => accountOf(2_000_000_123, '/x')).toThrow(/has no account on this system/);
    expect(accountOf(NOBODY, '/x')).toMatchObject({ uid: NOBODY, name: 'nobody' });
  });
});
