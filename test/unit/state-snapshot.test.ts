/** probe --sign-in's promise to leave the state dir as it was: what it removes (by UUID name only), what it reports, settings bytes put back. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { restoreSettings, restoreState, snapshotState } from '../../src/login/state-snapshot.js';

let root: string | undefined;
afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

const UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';

function stateDir(): { dir: string; settings: string } {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-snap-'));
  const dir = path.join(root, 'antigravity-acp');
  fs.mkdirSync(path.join(dir, 'conversations'), { recursive: true });
  const settings = path.join(dir, 'settings.json');
  fs.writeFileSync(settings, '{ "auth": {"type":"oauth-personal"} }\n', { mode: 0o640 });
  fs.writeFileSync(path.join(dir, 'conversations', 'keep-me.txt'), 'user data');
  return { dir, settings };
}

describe('state snapshot', () => {
  it('removes a conversation the server created (db, wal, shm, meta, brain dir), reports other new files and leaves them', () => {
    const { dir, settings } = stateDir();
    const snap = snapshotState(dir, settings);
    for (const ext of ['.db', '.db-wal', '.db-shm', '.meta'])
      fs.writeFileSync(path.join(dir, 'conversations', `${UUID}${ext}`), 'x');
    fs.mkdirSync(path.join(dir, 'brain', UUID), { recursive: true });
    fs.writeFileSync(path.join(dir, 'brain', UUID, 'notes'), 'x');
    fs.writeFileSync(path.join(dir, 'conversations', 'not-a-uuid.db'), 'x');
    fs.rmSync(path.join(dir, 'conversations', 'keep-me.txt'));
    const out = restoreState(snap);
    expect(out.removed).toEqual(
      [
        'brain',
        `brain/${UUID}`,
        ...['.db', '.db-shm', '.db-wal', '.meta'].map((e) => `conversations/${UUID}${e}`),
      ].sort(),
    );
    expect(out.left).toEqual(['conversations/not-a-uuid.db']);
    expect(out.missing).toEqual(['conversations/keep-me.txt']);
    expect(out.unchanged).toBe(false);
    expect(fs.existsSync(path.join(dir, 'conversations', 'not-a-uuid.db'))).toBe(true);
  });

  it('an untouched dir is unchanged; a state dir the server created and left empty goes', () => {
    const { dir, settings } = stateDir();
    expect(restoreState(snapshotState(dir, settings))).toEqual({ removed: [], left: [], missing: [], unchanged: true });
    const fresh = path.join(root!, 'fresh');
    const snap = snapshotState(fresh, path.join(fresh, 'settings.json'));
    fs.mkdirSync(path.join(fresh, 'conversations'), { recursive: true });
    expect(restoreState(snap).unchanged).toBe(true);
    expect(fs.existsSync(fresh)).toBe(false);
  });

  it('settings.json: a rewrite is undone byte for byte, mode included; an unchanged file is left alone', () => {
    const { dir, settings } = stateDir();
    const before = fs.readFileSync(settings);
    const snap = snapshotState(dir, settings);
    expect(restoreSettings(snap)).toEqual({ rewritten: false, existedBefore: true, restored: false });
    fs.writeFileSync(settings, '{\n  "auth": {\n    "type": "oauth-personal"\n  }\n}\n');
    fs.chmodSync(settings, 0o644);
    expect(restoreSettings(snap)).toEqual({ rewritten: true, existedBefore: true, restored: true });
    expect(fs.readFileSync(settings).equals(before)).toBe(true);
    expect(fs.statSync(settings).mode & 0o777).toBe(0o640);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
