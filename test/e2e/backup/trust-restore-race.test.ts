/**
 * Root restoring into a user's state dir while that user races it (issue
 * 21.2). The user (a second, unprivileged user created for the run) renames every `.agyctl-*` entry root makes in their
 * conversations/ away and puts a link to a root-only directory in its place,
 * and now and then swaps conversations/ itself for such a link, in a tight
 * loop. Root's restores must never write there, and a restore after the
 * attack must work (no "output file already exists").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson } from '../../helpers/cli.js';
import { stateDirOwnerForFile } from '../../helpers/os-user.js';

/** The state dir's owner: a user created for this run (removed afterwards). */
const user = stateDirOwnerForFile('the restore race tests');
const OWNER = user.uid;
const OWNER_GROUP = user.gid;
const A = '22222222-2222-4222-8222-222222222222';

let attacker: ChildProcess | undefined;
afterEach(() => {
  attacker?.kill('SIGKILL');
  attacker = undefined;
});

/** The user's loop: every `.agyctl-*` name in conversations/ becomes a link to `secret`; sometimes conversations/ itself. */
const SWAPPER = `
const fs = require('fs'), path = require('path');
const [conv, secret] = process.argv.slice(1);
let n = 0;
for (;;) {
  n += 1;
  let names = [];
  try { names = fs.readdirSync(conv); } catch {}
  for (const name of names) {
    if (!name.startsWith('.agyctl-') || name.endsWith('.moved')) continue;
    try { fs.renameSync(path.join(conv, name), path.join(conv, name + '.' + n + '.moved')); fs.symlinkSync(secret, path.join(conv, name)); } catch {}
  }
  if (n % 50 === 0) {
    try { fs.renameSync(conv, conv + '.real'); fs.symlinkSync(secret, conv); fs.unlinkSync(conv); fs.renameSync(conv + '.real', conv); } catch {}
  }
}`;

/** Puts `dir` back as the killed loop may have left it: a link in its place, the real one renamed, or neither. */
function undoSwap(dir: string): void {
  for (const p of [dir, `${dir}.real`])
    if (fs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) fs.unlinkSync(p);
  if (fs.existsSync(dir)) return;
  if (fs.existsSync(`${dir}.real`)) fs.renameSync(`${dir}.real`, dir);
  else {
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, OWNER, OWNER_GROUP);
  }
}

function makeDb(file: string, tag: string): void {
  const db = new Database(file);
  db.exec('CREATE TABLE steps (n INTEGER, tag TEXT)');
  for (let i = 0; i < 50; i++) db.prepare('INSERT INTO steps VALUES (?, ?)').run(i, tag);
  db.close();
  fs.chmodSync(file, 0o600);
  fs.chownSync(file, OWNER, OWNER_GROUP);
}

describe('root restoring into a user state dir the user races', () => {
  it('writes nothing through swapped directories, and a later restore works', async () => {
    const sb = makeSandbox();
    fs.chmodSync(sb.root, 0o755);
    const conv = path.join(sb.stateDir, 'conversations');
    fs.mkdirSync(conv, { recursive: true, mode: 0o700 });
    for (const d of [sb.home, path.dirname(sb.stateDir), sb.stateDir, conv]) fs.chownSync(d, OWNER, OWNER_GROUP);
    const secret = path.join(sb.root, 'secret');
    fs.mkdirSync(secret, { mode: 0o700 });
    makeDb(path.join(conv, `${A}.db`), 'snapshot');
    const bk = path.join(sb.root, 'bk');
    const b = await agyctl(['backup', '--to', bk, '--json'], sb);
    expect(b.exitCode, b.stderr).toBe(0);
    const snapshot = (parseJson(b.stdout) as any).snapshot.path as string;

    attacker = spawn(process.execPath, ['-e', SWAPPER, conv, secret], {
      uid: OWNER,
      gid: OWNER_GROUP,
      stdio: 'ignore',
    });
    for (let i = 0; i < 6; i++) {
      const r = await agyctl(['restore', snapshot, '--json'], sb);
      expect(r.stderr).not.toMatch(/output file already exists/);
      expect(fs.readdirSync(secret), `restore ${i}: ${r.stdout}${r.stderr}`).toEqual([]);
    }
    attacker.kill('SIGKILL');
    attacker = undefined;
    // The user's own dir may be left as the attack left it: a link at conversations/ is the user's to fix.
    undoSwap(conv);
    // ... and so are links it renamed into place (a staged copy swapped for a link becomes <id>.db: the user's own doing).
    for (const n of fs.readdirSync(conv))
      if (fs.lstatSync(path.join(conv, n)).isSymbolicLink()) fs.unlinkSync(path.join(conv, n));

    expect((await agyctl(['restore', snapshot], sb)).exitCode).toBe(0); // puts <id>.db back if the attack left a link there
    // The user's server writes on (a copy is kept only of content that differs from the snapshot).
    const db = new Database(path.join(conv, `${A}.db`), { fileMustExist: true });
    db.prepare('INSERT INTO steps VALUES (?, ?)').run(50, 'later');
    db.close();
    for (const n of fs.readdirSync(conv)) fs.lchownSync(path.join(conv, n), OWNER, OWNER_GROUP);
    const r = await agyctl(['restore', snapshot, '--json'], sb); // and replaces it, keeping a pre-restore copy
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
    expect(fs.readdirSync(secret)).toEqual([]);
    const restored = path.join(conv, `${A}.db`);
    expect(fs.lstatSync(restored).uid).toBe(OWNER);
    const pre = (parseJson(r.stdout) as any).restore.sessions[0].preRestore as string;
    expect(fs.lstatSync(pre).uid).toBe(OWNER);
    expect(fs.readdirSync(conv).filter((n) => n.startsWith('.agyctl-') && !n.endsWith('.moved'))).toEqual([]);
    expect(fs.readdirSync(sb.root).filter((n) => n.startsWith('agyctl-restore-'))).toEqual([]);
  });

  it("does the same in the user's brain/: a session's files never land where a swapped link points", async () => {
    const sb = makeSandbox();
    fs.chmodSync(sb.root, 0o755);
    const conv = path.join(sb.stateDir, 'conversations');
    const brain = path.join(sb.stateDir, 'brain');
    const files = path.join(brain, A);
    fs.mkdirSync(conv, { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(files, 'notes'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(files, 'implementation_plan.md'), '# plan\n');
    fs.writeFileSync(path.join(files, 'notes', 'a.md'), 'a\n');
    // Enough files that root's copy takes a while: the window the user's loop races.
    for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(files, 'notes', `n${i}.md`), `${i}\n`.repeat(200));
    for (const d of [sb.home, path.dirname(sb.stateDir), sb.stateDir, conv, brain]) fs.chownSync(d, OWNER, OWNER_GROUP);
    // The user's files are the user's, as on a real box (a root-owned one would pass the final owner check only when
    // the race happened to make a restore rewrite it).
    fs.chownSync(files, OWNER, OWNER_GROUP);
    for (const n of fs.readdirSync(files, { recursive: true }))
      fs.chownSync(path.join(files, String(n)), OWNER, OWNER_GROUP);
    // A root-only directory laid out like a brain dir, so a write that follows a swapped link lands there.
    const secret = path.join(sb.root, 'secret');
    fs.mkdirSync(path.join(secret, A, 'notes'), { recursive: true, mode: 0o700 });
    const planted = (): string[] => fs.readdirSync(secret, { recursive: true }).map(String).sort();
    const before = planted();
    makeDb(path.join(conv, `${A}.db`), 'snapshot');
    const bk = path.join(sb.root, 'bk');
    const b = await agyctl(['backup', '--to', bk, '--json'], sb);
    expect(b.exitCode, b.stderr).toBe(0);
    const snapshot = (parseJson(b.stdout) as any).snapshot.path as string;

    attacker = spawn(process.execPath, ['-e', SWAPPER, brain, secret], {
      uid: OWNER,
      gid: OWNER_GROUP,
      stdio: 'ignore',
    });
    for (let i = 0; i < 6; i++) {
      const r = await agyctl(['restore', snapshot, '--json'], sb);
      expect(r.stderr).not.toMatch(/output file already exists/);
      expect(planted(), `restore ${i}: ${r.stdout}${r.stderr}`).toEqual(before);
    }
    attacker.kill('SIGKILL');
    attacker = undefined;
    undoSwap(brain);
    // The user edits a note, so the restore after the attack must write the session's files, not leave them be.
    fs.writeFileSync(path.join(files, 'notes', 'a.md'), 'edited\n');
    const r = await agyctl(['restore', snapshot, '--json'], sb);
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
    expect((parseJson(r.stdout) as any).restore.sessions[0].brainUnchanged).toBe(false);
    expect(planted()).toEqual(before);
    expect(fs.readFileSync(path.join(files, 'notes', 'a.md'), 'utf8')).toBe('a\n');
    expect(fs.lstatSync(path.join(files, 'notes', 'a.md')).uid).toBe(OWNER);
  });
});
