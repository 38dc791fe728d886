/**
 * Root restoring into and backing up users' state dirs reads only what is
 * root's own, and keeps each state dir's snapshots apart. Two users created
 * for the run: `bob` (the file's user) and `mallory`, who plants a snapshot
 * directory with a link to a root-only file, a FIFO and a link at an
 * archive path, and shares root's backup directory with bob.
 *
 * @module-tag root
 */

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox } from '../../helpers/cli.js';
import { createUser, stateDirOwnerForFile } from '../../helpers/os-user.js';
import { makeTaggedDb, tagsOf } from '../../helpers/tagged-db.js';

const bob = stateDirOwnerForFile('the root-reads-only-its-own tests');
const mallory = createUser('/nonexistent');
afterAll(() => mallory.remove());

const BOB_ID = '33333333-3333-4333-8333-333333333333';
const MAL_ID = '44444444-4444-4444-8444-444444444444';

/** A sandbox whose home and state dir belong to `who`, with one conversation `id` tagged `tag`. */
function userBox(who: { uid: number; gid: number }, id: string, tag: string): Sandbox & { conv: string } {
  const sb = makeSandbox();
  fs.chmodSync(sb.root, 0o755);
  const conv = path.join(sb.stateDir, 'conversations');
  fs.mkdirSync(conv, { recursive: true, mode: 0o700 });
  for (const d of [sb.home, path.dirname(sb.stateDir), sb.stateDir, conv]) fs.chownSync(d, who.uid, who.gid);
  makeTaggedDb(path.join(conv, `${id}.db`), tag, 20, who);
  return Object.assign(sb, { conv });
}

const sha = (data: Buffer): string => crypto.createHash('sha256').update(data).digest('hex');

describe('root restoring from what a user gives it', () => {
  it("never streams a root-only file a user's snapshot dir links to, nor prints its hash", async () => {
    const sb = userBox(mallory, MAL_ID, 'mallory');
    // A root-only file: a conversation database of root's, 0600.
    const secret = path.join(sb.root, 'root-secret.db');
    makeTaggedDb(secret, 'ROOT-SECRET', 20, { uid: 0, gid: 0 });
    const secretBytes = fs.readFileSync(secret);
    // Mallory's "snapshot": a manifest naming <id>.db, which is a link to root's file.
    const snap = path.join(sb.home, 'snap');
    fs.mkdirSync(snap, { mode: 0o755 });
    const manifest = {
      schemaVersion: 2,
      kind: 'agyctl-backup',
      created: new Date().toISOString(),
      host: os.hostname(),
      agyctlVersion: '0',
      sourceStateDir: sb.stateDir,
      sessions: [
        {
          id: BOB_ID,
          file: `${BOB_ID}.db`,
          bytes: secretBytes.length,
          sha256: '0'.repeat(64),
          cwd: null,
          integrity: 'ok',
          rows: {},
          meta: null,
          reused: false,
          source: { db: null, wal: null, checkedAt: new Date().toISOString() },
        },
      ],
      failed: [],
    };
    fs.writeFileSync(path.join(snap, 'manifest.json'), JSON.stringify(manifest));
    fs.symlinkSync(secret, path.join(snap, `${BOB_ID}.db`));
    for (const p of [snap, path.join(snap, 'manifest.json'), path.join(snap, `${BOB_ID}.db`)])
      fs.lchownSync(p, mallory.uid, mallory.gid);

    const r = await agyctl(['restore', snap, '--json'], sb, { timeoutMs: 30_000 });
    expect(r.exitCode, `${r.stdout}${r.stderr}`).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toContain(sha(secretBytes));
    expect(fs.existsSync(path.join(sb.conv, `${BOB_ID}.db`))).toBe(false);
    // Nothing of root's file landed anywhere mallory owns (her restore's scratch dirs included).
    const hers = fs
      .readdirSync(sb.root, { recursive: true })
      .map((n) => path.join(sb.root, String(n)))
      .filter((p) => fs.lstatSync(p).isFile() && fs.lstatSync(p).uid === mallory.uid);
    for (const p of hers) expect(fs.readFileSync(p).includes(Buffer.from('ROOT-SECRET')), p).toBe(false);
  });

  it("refuses a FIFO or a link at --archive (no hang), and a root snapshot reached through a user's link", async () => {
    const sb = userBox(mallory, MAL_ID, 'mallory');
    const fifo = path.join(sb.home, 'a.tar');
    execFileSync('mkfifo', [fifo]);
    fs.lchownSync(fifo, mallory.uid, mallory.gid);
    const viaFifo = await agyctl(['restore', '--archive', fifo, '--json'], sb, { timeoutMs: 20_000 });
    expect(viaFifo.exitCode, `${viaFifo.stdout}${viaFifo.stderr}`).toBe(2);
    expect((parseJson(viaFifo.stdout) as any).error.code).toBe('restore-source-not-roots');
    expect((parseJson(viaFifo.stdout) as any).error.message).toContain('a FIFO');

    // Root's own archive of bob's state dir, and mallory's link to it.
    const bobBox = userBox(bob, BOB_ID, 'bob');
    const rootArchive = path.join(bobBox.root, 'bob.tar');
    const b = await agyctl(['backup', '--to', path.join(bobBox.root, 'bk'), '--archive', rootArchive], bobBox);
    expect(b.exitCode, b.stderr).toBe(0);
    fs.chmodSync(rootArchive, 0o600);
    const link = path.join(sb.home, 'b.tar');
    fs.symlinkSync(rootArchive, link);
    fs.lchownSync(link, mallory.uid, mallory.gid);
    const viaLink = await agyctl(['restore', '--archive', link, '--from-other-source', '--json'], sb, {
      timeoutMs: 20_000,
    });
    expect(viaLink.exitCode, `${viaLink.stdout}${viaLink.stderr}`).toBe(2);
    expect((parseJson(viaLink.stdout) as any).error.code).toBe('restore-source-not-roots');
    expect(fs.existsSync(path.join(sb.conv, `${BOB_ID}.db`))).toBe(false);

    // A directory link of mallory's into root's backup dir: root does not follow it for her.
    const snapshots = path.join(bobBox.root, 'bk');
    const name = fs.readdirSync(snapshots).find((n) => /^\d/.test(n))!;
    const dirLink = path.join(sb.home, 'snaps');
    fs.symlinkSync(snapshots, dirLink);
    fs.lchownSync(dirLink, mallory.uid, mallory.gid);
    const viaDir = await agyctl(['restore', path.join(dirLink, name), '--from-other-source', '--json'], sb);
    expect(viaDir.exitCode, `${viaDir.stdout}${viaDir.stderr}`).toBe(2);
    expect((parseJson(viaDir.stdout) as any).error.code).toBe('restore-source-not-roots');
    expect(fs.existsSync(path.join(sb.conv, `${BOB_ID}.db`))).toBe(false);
  });
});

describe("two users' snapshots in one backup directory", () => {
  it("restore latest takes this state dir's snapshot; another's is refused unless asked; retention keeps the other's", async () => {
    const bobBox = userBox(bob, BOB_ID, 'bob');
    const malBox = userBox(mallory, MAL_ID, 'mallory');
    const shared = path.join(bobBox.root, 'shared');
    const mb = await agyctl(['backup', '--to', shared, '--json'], malBox);
    expect(mb.exitCode, mb.stderr).toBe(0);
    const bb = await agyctl(['backup', '--to', shared, '--json', '--keep-last', '1'], bobBox);
    expect(bb.exitCode, bb.stderr).toBe(0);
    const bobSnapshot = (parseJson(bb.stdout) as any).snapshot.path as string;
    const malSnapshot = (parseJson(mb.stdout) as any).snapshot.path as string;
    // Bob's --keep-last 1 is about bob's snapshots: mallory's stays.
    expect(fs.existsSync(malSnapshot)).toBe(true);

    fs.rmSync(path.join(malBox.conv, `${MAL_ID}.db`));
    const r = await agyctl(['restore', 'latest', '--from', shared, '--json'], malBox);
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
    expect(fs.readdirSync(malBox.conv).filter((n) => n.endsWith('.db'))).toEqual([`${MAL_ID}.db`]);
    expect(tagsOf(path.join(malBox.conv, `${MAL_ID}.db`))).toEqual(['mallory']);

    const other = await agyctl(['restore', bobSnapshot, '--json'], malBox);
    expect(other.exitCode, `${other.stdout}${other.stderr}`).toBe(2);
    expect((parseJson(other.stdout) as any).error.hint).toContain('--from-other-source');
    expect(fs.existsSync(path.join(malBox.conv, `${BOB_ID}.db`))).toBe(false);
    const asked = await agyctl(['restore', bobSnapshot, '--from-other-source', '--json'], malBox);
    expect(asked.exitCode, `${asked.stdout}${asked.stderr}`).toBe(0);
    expect(fs.lstatSync(path.join(malBox.conv, `${BOB_ID}.db`)).uid).toBe(mallory.uid);
  });

  it("root's default backup dir keeps a subdirectory per user's state dir", async () => {
    const bobBox = userBox(bob, BOB_ID, 'bob');
    const malBox = userBox(mallory, MAL_ID, 'mallory');
    // One root HOME for both runs, as on a box root provisions.
    const rootHome = path.join(bobBox.root, 'roothome');
    fs.mkdirSync(rootHome, { mode: 0o700 });
    const env = { HOME: rootHome };
    const bb = await agyctl(['--state-dir', bobBox.stateDir, 'backup', '--json'], bobBox, { env });
    const mb = await agyctl(['--state-dir', malBox.stateDir, 'backup', '--json'], malBox, { env });
    expect(bb.exitCode, bb.stderr).toBe(0);
    expect(mb.exitCode, mb.stderr).toBe(0);
    const dirs = [bb, mb].map((r) => path.dirname((parseJson(r.stdout) as any).snapshot.path as string));
    const base = path.join(rootHome, '.local', 'state', 'agyctl', 'backups', 'sources');
    expect(dirs[0]!.startsWith(`${base}/${bob.uid}-`)).toBe(true);
    expect(dirs[1]!.startsWith(`${base}/${mallory.uid}-`)).toBe(true);
    const list = await agyctl(['--state-dir', malBox.stateDir, 'backup', 'list', '--json'], malBox, { env });
    expect(list.stdout).toContain(dirs[1]!);
  });
});

describe("a user's sparse files and root's disk", () => {
  it('root keeps holes, counts brain/ bytes in the summary, and refuses a run over --max-bytes', async () => {
    const sb = userBox(mallory, MAL_ID, 'mallory');
    const files = path.join(sb.stateDir, 'brain', MAL_ID);
    fs.mkdirSync(files, { recursive: true, mode: 0o700 });
    const sparse = path.join(files, 'huge.md');
    fs.writeFileSync(sparse, 'start\n');
    fs.truncateSync(sparse, 64 * 1024 * 1024); // 64 MB that take a few KB
    for (const p of [path.join(sb.stateDir, 'brain'), files, sparse]) fs.lchownSync(p, mallory.uid, mallory.gid);
    const bk = path.join(sb.root, 'bk');

    const capped = await agyctl(['backup', '--to', bk, '--max-bytes', '32M', '--json'], sb, { timeoutMs: 60_000 });
    expect(capped.exitCode, `${capped.stdout}${capped.stderr}`).toBe(6);
    expect((parseJson(capped.stdout) as any).error.code).toBe('backup-over-cap');
    expect(fs.readdirSync(bk).filter((n) => /^\d/.test(n))).toEqual([]);

    const r = await agyctl(['backup', '--to', bk], sb, { timeoutMs: 60_000 });
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/; 64 MB in /); // the brain file counted (the database alone is a few KB)
    const name = fs.readdirSync(bk).find((n) => /^\d/.test(n))!;
    const copy = fs.statSync(path.join(bk, name, 'brain', MAL_ID, 'huge.md'));
    expect(copy.size).toBe(64 * 1024 * 1024);
    expect(copy.blocks * 512).toBeLessThan(1024 * 1024); // the holes stayed holes in root's backup dir
  });
});

describe('backup --dry-run as root on a user state dir', () => {
  it("plans as the owner: a planted link into a root-only directory shows nothing of root's, as the real run", async () => {
    const sb = userBox(mallory, MAL_ID, 'mallory');
    // Root's own conversations, in a root-only directory.
    const rootConv = path.join(sb.root, 'root-conversations');
    fs.mkdirSync(rootConv, { mode: 0o700 });
    const ROOT_ID = '66666666-6666-4666-8666-666666666666';
    makeTaggedDb(path.join(rootConv, `${ROOT_ID}.db`), 'root', 5, { uid: 0, gid: 0 });
    // Mallory's conversations/ becomes a link to it.
    fs.rmSync(sb.conv, { recursive: true });
    fs.symlinkSync(rootConv, sb.conv);
    fs.lchownSync(sb.conv, mallory.uid, mallory.gid);
    const bk = path.join(sb.root, 'bk');
    const dry = await agyctl(['backup', '--to', bk, '--dry-run', '--json'], sb);
    const real = await agyctl(['backup', '--to', bk, '--json'], sb);
    expect(`${dry.stdout}${dry.stderr}`).not.toContain(ROOT_ID);
    expect(`${real.stdout}${real.stderr}`).not.toContain(ROOT_ID);
    expect(dry.exitCode, `${dry.stdout}${dry.stderr}`).toBe(real.exitCode);
  });
});

describe("names from the user's side on root's terminal", () => {
  it('a brain/ file name with escape codes: backup, backup verify and backup list print none of them', async () => {
    const sb = userBox(mallory, MAL_ID, 'mallory');
    const files = path.join(sb.stateDir, 'brain', MAL_ID);
    fs.mkdirSync(files, { recursive: true, mode: 0o700 });
    const evil = 'plan\x1b]0;PWNED\x07\x1b[2J\x1b[31m\x9b1m\ttab\rcr.md';
    fs.writeFileSync(path.join(files, evil), 'the plan\n');
    fs.writeFileSync(path.join(files, 'ok.md'), 'fine\n');
    execFileSync('mkfifo', [path.join(files, `fifo\x1b[2J${evil}`)]);
    for (const p of fs.readdirSync(files)) fs.lchownSync(path.join(files, p), mallory.uid, mallory.gid);
    for (const p of [path.join(sb.stateDir, 'brain'), files]) fs.lchownSync(p, mallory.uid, mallory.gid);
    const bk = path.join(sb.root, 'bk');
    const outputs: string[] = [];
    const b = await agyctl(['backup', '--to', bk, '--verbose'], sb, { timeoutMs: 60_000 });
    outputs.push(`${b.stdout}${b.stderr}`);
    const name = fs.readdirSync(bk).find((n) => /^\d/.test(n))!;
    // A name with control characters is not taken (reported as skipped); the others are.
    expect(fs.readdirSync(path.join(bk, name, 'brain', MAL_ID))).toEqual(['ok.md']);
    const copy = path.join(bk, name, 'brain', MAL_ID, 'ok.md');
    fs.chmodSync(copy, 0o600);
    fs.writeFileSync(copy, 'changed\n');
    const v = await agyctl(['backup', 'verify', 'latest', '--from', bk, '--verbose'], sb, { timeoutMs: 60_000 });
    expect(v.exitCode, `${v.stdout}${v.stderr}`).toBe(6); // the changed file is named as damaged
    outputs.push(`${v.stdout}${v.stderr}`);
    const l = await agyctl(['backup', 'list', '--from', bk], sb, { timeoutMs: 60_000 });
    outputs.push(`${l.stdout}${l.stderr}`);
    for (const out of outputs) expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(outputs[0]).toMatch(/plan.*cr\.md/); // named, sanitized, among the skipped
    expect(outputs[1]).toContain('ok.md');
  });
});
