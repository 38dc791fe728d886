/**
 * Root in a user's tree becomes that user (docs/security.md). A user created
 * for the run (useradd, removed afterwards) owns the state dir and races
 * root's real runs from a loop of its own, a bounded number of times: the
 * review's three attacks on brain/ and on the state dir, planted links and
 * FIFOs at the names agyctl uses, and root's `check --live`, `login`,
 * `probe` and `sessions export`, whose servers must run as the user. Root
 * must never read, write, chown or delete anything outside the user's
 * reach, and every report must be true.
 *
 * @module-tag root
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox, simPath } from '../../helpers/cli.js';
import { createUser, type OsUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';
import { renameExchange } from '../../helpers/rename-exchange.js';
import { makeTaggedDb, tagsOf } from '../../helpers/tagged-db.js';

// agyctl runs itself again as the created user: it must be where they can read it.
beforeAll(useReadableApp);

requireRoot('the root-as-owner tests');

const A = '33333333-3333-4333-8333-333333333333';
const ROOT_ONLY = 'ROOT-ONLY-SECRET\n';
/** Restores raced per attack (each a few seconds; on the old code a root file went within the first few). */
const RESTORE_TRIES = 10;
/** Backups raced (on the old code nearly every one took a root file). */
const BACKUP_TRIES = 4;

interface Box extends Sandbox {
  user: OsUser;
  conv: string;
  brain: string;
  /** Root's own 0700 directory with a root-only file: nothing in it may change. */
  secret: string;
  /** A root-owned 0755 directory: nothing may appear in it. */
  rootDir: string;
}

let box: Box | undefined;
const attackers: ChildProcess[] = [];
afterEach(async () => {
  await stopAttacks();
  box?.user.remove();
  box = undefined;
});

function userBox(extraEnv: NodeJS.ProcessEnv = {}): Box {
  const sb = makeSandbox(extraEnv);
  fs.chmodSync(sb.root, 0o755);
  const user = createUser(sb.home);
  const conv = path.join(sb.stateDir, 'conversations');
  const brain = path.join(sb.stateDir, 'brain');
  fs.mkdirSync(conv, { recursive: true, mode: 0o700 });
  fs.mkdirSync(brain, { mode: 0o700 });
  for (const d of [sb.home, path.dirname(sb.stateDir), sb.stateDir, conv, brain]) fs.chownSync(d, user.uid, user.gid);
  const secret = path.join(sb.root, 'secret');
  fs.mkdirSync(path.join(secret, A, 'notes'), { recursive: true, mode: 0o700 });
  for (const f of ['victim', path.join(A, 'notes', 'secret.md'), path.join(A, 'implementation_plan.md')])
    fs.writeFileSync(path.join(secret, f), ROOT_ONLY, { mode: 0o600 });
  const rootDir = path.join(sb.root, 'rootdir');
  fs.mkdirSync(rootDir, { mode: 0o755 });
  box = Object.assign(sb, { user, conv, brain, secret, rootDir });
  return box;
}

/** Every name, owner, mode, size and hash under `dir`: what root's own directories must keep. */
function listing(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .sort()
    .map((name) => {
      const st = fs.lstatSync(path.join(dir, name));
      const hash = st.isFile()
        ? crypto
            .createHash('sha256')
            .update(fs.readFileSync(path.join(dir, name)))
            .digest('hex')
        : '';
      return `${name} ${st.uid} ${(st.mode & 0o7777).toString(8)} ${st.size} ${hash}`;
    });
}

function own(b: Box, ...files: string[]): void {
  for (const f of files) fs.lchownSync(f, b.user.uid, b.user.gid);
}

/** A snapshot holds no root-only content and no link. */
function expectNoRootFile(snapshot: string): void {
  for (const f of fs.readdirSync(snapshot, { recursive: true }).map(String)) {
    const p = path.join(snapshot, f);
    if (fs.lstatSync(p).isFile()) expect(fs.readFileSync(p, 'utf8'), p).not.toContain(ROOT_ONLY.trim());
    expect(fs.lstatSync(p).isSymbolicLink(), p).toBe(false);
  }
}

const makeDb = (b: Box, file: string, tag: string): void => makeTaggedDb(file, tag, 50, b.user);

/** A brain dir for A with `n` notes (enough that root's walk or copy takes a while: the window the loop races). */
function makeBrain(b: Box, n: number): string {
  const files = path.join(b.brain, A);
  fs.mkdirSync(path.join(files, 'notes'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(files, 'implementation_plan.md'), '# plan\n');
  for (let i = 0; i < n; i++) fs.writeFileSync(path.join(files, 'notes', `n${i}.md`), `${i}\n`.repeat(100));
  for (const f of fs.readdirSync(files, { recursive: true })) own(b, path.join(files, String(f)));
  own(b, files);
  return files;
}

/**
 * A loop run as the user: `body` is JavaScript with `fs`, `path`, `argv`, the round `n` and `hold(ms)`
 * (keep the current state that long: a link that is there half the time meets root's steps far more often)
 * in scope, run over and over.
 */
function attack(b: Box, body: string, ...argv: string[]): void {
  const script = `const fs = require('fs'), path = require('path'); const argv = process.argv.slice(1);
    const hold = (ms) => { const until = performance.now() + ms; while (performance.now() < until); };
    for (let n = 0; ; n++) { ${body} }`;
  const child = spawn(process.execPath, ['-e', script, ...argv], { uid: b.user.uid, gid: b.user.gid, stdio: 'ignore' });
  attackers.push(child);
}

/** Kills the loops and waits until they are gone: a loop still running would undo what the test puts back. */
async function stopAttacks(): Promise<void> {
  const running = attackers.splice(0).filter((a) => a.exitCode === null && a.signalCode === null);
  const gone = running.map((a) => new Promise((resolve) => a.once('exit', resolve)));
  for (const a of running) a.kill('SIGKILL');
  await Promise.all(gone);
}

/** Puts `dir` back where the killed loop may have left a link in its place or the real one renamed. */
function undoSwap(dir: string, suffix: string): void {
  if (fs.lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) fs.unlinkSync(dir);
  if (!fs.existsSync(dir) && fs.existsSync(dir + suffix)) fs.renameSync(dir + suffix, dir);
}

async function backupTo(b: Box, dir: string): Promise<{ exitCode: number; json: any; text: string }> {
  const r = await agyctl(['backup', '--to', dir, '--json'], b, { timeoutMs: 60_000 });
  return { exitCode: r.exitCode, json: r.stdout ? parseJson(r.stdout) : {}, text: `${r.stdout}\n${r.stderr}` };
}

/**
 * A `restore --json` whose report is checked against the database and the brain directory it describes;
 * `first` checks what the run must not have done, before its report.
 */
async function truthfulRestore(
  b: Box,
  snapshot: string,
  snapTag: string,
  first?: (text: string) => void,
): Promise<number> {
  const db = path.join(b.conv, `${A}.db`);
  const brainDir = path.join(b.brain, A);
  const before = fs.existsSync(db) ? crypto.createHash('sha256').update(fs.readFileSync(db)).digest('hex') : null;
  const brainBefore = fs.lstatSync(brainDir, { throwIfNoEntry: false })?.ino;
  const r = await agyctl(['restore', snapshot, '--json'], b, { timeoutMs: 60_000 });
  const text = `${r.stdout}\n${r.stderr}`;
  first?.(text);
  expect(r.exitCode, text).not.toBe(1); // never a crash
  expect(text).not.toMatch(/output file already exists/);
  const doc = r.stdout.trim() ? parseJson(r.stdout) : {};
  const sessions = ((doc.restore as any)?.sessions ?? []) as Array<{
    id: string;
    restored: boolean;
    reason?: string;
    brainFiles: number;
    brainPreRestore: string | null;
  }>;
  const dbNow = (): string | null =>
    fs.lstatSync(db, { throwIfNoEntry: false })?.isFile()
      ? crypto.createHash('sha256').update(fs.readFileSync(db)).digest('hex')
      : null;
  // "Nothing was changed" only when nothing was; "restored" only when the database holds the snapshot.
  if (/Nothing was changed|nothing was restored/i.test(text)) expect(dbNow(), text).toBe(before);
  if (sessions.some((s) => s.id === A && s.restored) && dbNow() !== null) expect(tagsOf(db), text).toEqual([snapTag]);
  // "not restored" leaves the database as it was, unless the reason says the database itself was restored.
  if (sessions.some((s) => s.id === A && !s.restored && !/database was restored/.test(s.reason ?? '')))
    expect(dbNow(), text).toBe(before);
  // The brain directory was replaced exactly when the report says its files were restored, and the one
  // it replaced is where the report says it was kept.
  const session = sessions.find((s) => s.id === A);
  if (session) {
    const brainNow = fs.lstatSync(brainDir, { throwIfNoEntry: false })?.ino;
    expect(brainNow !== brainBefore, `brain/${A} replaced: ${text}`).toBe(session.restored && session.brainFiles > 0);
    if (brainNow !== brainBefore && brainBefore !== undefined)
      expect(fs.lstatSync(session.brainPreRestore ?? brainDir).ino, `the previous brain/${A}: ${text}`).toBe(
        brainBefore,
      );
  }
  return r.exitCode;
}

/** A snapshot (tag "snap", `notes` brain files) in root's own backup dir; then the live database changes (tag "current"). */
async function snapshotThenChange(b: Box, notes: number): Promise<string> {
  makeDb(b, path.join(b.conv, `${A}.db`), 'snap');
  makeBrain(b, notes);
  const first = await backupTo(b, path.join(b.root, 'bk'));
  expect(first.exitCode, first.text).toBe(0);
  makeDb(b, path.join(b.conv, `${A}.db`), 'current');
  return first.json.snapshot.path as string;
}

describe("root's restore while the user races brain/ and the state dir", () => {
  it('a subdirectory exchanged with a link to root-only files: nothing of root is removed or written, every report true', async () => {
    const b = userBox();
    const snapshot = await snapshotThenChange(b, 300);
    const secretBefore = listing(b.secret);
    // Every private dir a restore makes in brain/ is renamed away once it is being filled and replaced by
    // the user's tree, holding the names root's directory holds and 200 more; when the restore lists that
    // tree to remove it, the tree is exchanged with a link to root's directory. Going on by path then
    // removes root's files.
    attackers.push(
      renameExchange(b.user, [
        'private',
        b.brain,
        path.join(b.secret, A),
        '200',
        'implementation_plan.md',
        'notes/secret.md',
      ]),
    );
    for (let i = 0; i < RESTORE_TRIES; i++)
      await truthfulRestore(b, snapshot, 'snap', (text) =>
        expect(listing(b.secret), `restore ${i}: ${text}`).toEqual(secretBefore),
      );
    await stopAttacks();
    expect(listing(b.rootDir)).toEqual([]);
  });

  it('the state dir swapped for a link to a root-owned dir: nothing is created there, every report true', async () => {
    const b = userBox();
    const snapshot = await snapshotThenChange(b, 100);
    fs.rmSync(path.join(b.brain, A), { recursive: true });
    attack(
      b,
      `try { fs.renameSync(argv[0], argv[0] + '.real'); fs.symlinkSync(argv[1], argv[0]); fs.unlinkSync(argv[0]); fs.renameSync(argv[0] + '.real', argv[0]); } catch {}`,
      b.stateDir,
      b.rootDir,
    );
    for (let i = 0; i < 5; i++) {
      const r = await agyctl(['restore', snapshot, '--json'], b, { timeoutMs: 60_000 });
      expect(r.exitCode, `${r.stdout}${r.stderr}`).not.toBe(1);
      expect(listing(b.rootDir), `restore ${i}: ${r.stdout}${r.stderr}`).toEqual([]);
    }
    await stopAttacks();
    undoSwap(b.stateDir, '.real');
    // After the attack, one more restore whose report is checked against the database.
    expect(await truthfulRestore(b, snapshot, 'snap')).toBe(0);
    expect(tagsOf(path.join(b.conv, `${A}.db`))).toEqual(['snap']);
  });
});

describe("root's backup while the user races brain/", () => {
  it('directories exchanged with links mid-walk never put a root-only file into a snapshot', async () => {
    const b = userBox();
    makeDb(b, path.join(b.conv, `${A}.db`), 'live');
    // A wide brain tree, so the walk takes a while; every directory in it is exchanged over and over with
    // a link to root's directory holding files under the same names: a step that goes by path through
    // one of those directories reads root's file.
    const files = makeBrain(b, 0);
    const rootNotes = path.join(b.secret, A, 'notes');
    const pairs: string[] = [];
    for (let d = 0; d < 20; d++) {
      const dir = path.join(files, `d${d}`);
      fs.mkdirSync(dir, { mode: 0o700 });
      for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, `n${i}.md`), `${i}\n`.repeat(20));
      fs.symlinkSync(rootNotes, `${dir}.l`);
      own(b, dir, `${dir}.l`, ...fs.readdirSync(dir).map((f) => path.join(dir, f)));
      pairs.push(dir, `${dir}.l`);
    }
    for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(rootNotes, `n${i}.md`), ROOT_ONLY, { mode: 0o600 });
    const bk = path.join(b.root, 'bk');
    attackers.push(renameExchange(b.user, ['pairs', ...pairs]));
    for (let i = 0; i < BACKUP_TRIES; i++) {
      const r = await backupTo(b, bk);
      expect([0, 6], r.text).toContain(r.exitCode);
      expectNoRootFile(r.json.snapshot.path);
    }
  });
});

describe('planted links and FIFOs at the names agyctl uses in the user tree', () => {
  const fifo = (b: Box, file: string): void => {
    fs.rmSync(file, { force: true });
    execFileSync('mkfifo', ['-m', '0600', file]);
    own(b, file);
  };
  const link = (b: Box, file: string, target: string): void => {
    fs.rmSync(file, { force: true });
    fs.symlinkSync(target, file);
    own(b, file);
  };

  it('settings, token, conversation and brain names: no hang, nothing of root read or changed', {
    timeout: 240_000,
  }, async () => {
    const b = userBox();
    const victim = path.join(b.secret, 'victim');
    const secretBefore = listing(b.secret);
    makeDb(b, path.join(b.conv, `${A}.db`), 'snap');
    const bk = path.join(b.root, 'bk');
    const first = await backupTo(b, bk);
    expect(first.exitCode, first.text).toBe(0);
    const snapshot = first.json.snapshot.path as string;

    fifo(b, path.join(b.stateDir, 'settings.json'));
    link(b, path.join(b.stateDir, 'acp_token.json'), victim);
    fifo(b, path.join(b.conv, `${A}.meta`));
    link(b, path.join(b.conv, `${A}.db-wal`), victim);
    link(b, path.join(b.conv, `${A}.db-shm`), victim);
    link(b, path.join(b.brain, A), path.join(b.secret, A));
    // Every name a restore could pick for the next seconds: a pre-restore copy, a staged database.
    const now = Date.now();
    for (let t = now; t < now + 8_000; t += 1) {
      const stamp = new Date(t).toISOString();
      link(b, path.join(b.conv, `${A}.db.pre-restore-${stamp}`), victim);
      link(b, path.join(b.conv, `.${A}.db.restore-${stamp.replace(/:/g, '-')}.tmp`), victim);
    }
    const runs: Array<[string[], number[]]> = [
      [['settings', 'set-auth', 'gemini-api-key'], [2]],
      [
        ['settings', 'show'],
        [0, 2, 6],
      ],
      [['check'], [2, 3, 6]],
      [['sessions'], [0]],
      [['logout', '--local'], [2]],
      [
        ['backup', '--to', bk],
        [0, 6],
      ],
      [
        ['restore', snapshot],
        [0, 2, 6],
      ],
    ];
    for (const [args, exits] of runs) {
      const r = await agyctl([...args, '--json'], b, { timeoutMs: 30_000 });
      expect(exits, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toContain(r.exitCode);
      expect(listing(b.secret), args.join(' ')).toEqual(secretBefore);
      expect(`${r.stdout}${r.stderr}`).not.toContain(ROOT_ONLY.trim());
    }
    // Without the links that make restore refuse, it works past the planted pre-restore and staging names.
    for (const f of [`${A}.db-wal`, `${A}.db-shm`, `${A}.meta`]) fs.rmSync(path.join(b.conv, f));
    fs.unlinkSync(path.join(b.brain, A));
    const restored = await agyctl(['restore', snapshot, '--json'], b, { timeoutMs: 30_000 });
    expect(restored.exitCode, `${restored.stdout}${restored.stderr}`).toBe(0);
    expect(tagsOf(path.join(b.conv, `${A}.db`))).toEqual(['snap']);
    expect(listing(b.secret)).toEqual(secretBefore);
    for (const snap of fs.readdirSync(bk).filter((n) => !n.startsWith('.'))) expectNoRootFile(path.join(bk, snap));
  });
});

describe('the servers root starts for the user state dir run as the user', () => {
  /** A server command that records who it runs as (uid, then groups) before it becomes the simulator. */
  function recordingServer(b: Box): { record: string; env: NodeJS.ProcessEnv } {
    const dir = path.join(b.root, 'record');
    fs.mkdirSync(dir, { mode: 0o700 });
    own(b, dir);
    const record = path.join(dir, 'who');
    const script = path.join(b.root, 'server.sh');
    fs.writeFileSync(script, `#!/bin/sh\n{ id -u; id -G; } >> ${record}\nexec node ${simPath()} "$@"\n`, {
      mode: 0o755,
    });
    return { record, env: { AGYCTL_SERVER: `sh ${script}` } };
  }

  function expectOnlyTheUser(b: Box, record: string, what: string): void {
    const lines = fs.readFileSync(record, 'utf8').trim().split('\n');
    expect(lines.length, what).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < lines.length; i += 2) {
      expect(Number(lines[i]), what).toBe(b.user.uid);
      const groups = lines[i + 1]!.split(' ').map(Number);
      expect(groups, what).toContain(b.user.extraGroup.gid); // supplementary groups kept
      expect(groups, what).not.toContain(0);
    }
    fs.rmSync(record);
  }

  it('check --live, login, probe and sessions export: every server start is the user, with their groups', async () => {
    const b = userBox();
    const { record, env } = recordingServer(b);
    fs.writeFileSync(path.join(b.stateDir, 'settings.json'), '{"auth": {"type": "oauth-personal"}}\n', { mode: 0o600 });
    own(b, path.join(b.stateDir, 'settings.json'));
    makeDb(b, path.join(b.conv, `${A}.db`), 'live');

    const live = await agyctl(['check', '--live', '--json'], b, { env, timeoutMs: 60_000 });
    expect([0, 3], live.stderr).toContain(live.exitCode);
    expectOnlyTheUser(b, record, 'check --live');

    const login = await agyctl(['login', '--json', '--timeout', '3s'], b, { env, timeoutMs: 60_000 });
    expect([5], `${login.stdout}${login.stderr}`).toContain(login.exitCode);
    expectOnlyTheUser(b, record, 'login');

    const probe = await agyctl(['probe', '--json'], b, { env, timeoutMs: 60_000 });
    expect(probe.exitCode, probe.stderr).toBe(0);
    expectOnlyTheUser(b, record, 'probe');

    const out = path.join(b.root, 'export');
    fs.mkdirSync(out, { mode: 0o700 });
    own(b, out);
    const exported = await agyctl(['sessions', 'export', '--out', out, '--json'], b, { env, timeoutMs: 60_000 });
    expect(exported.exitCode, exported.stderr).not.toBe(1);
    expectOnlyTheUser(b, record, 'sessions export');
    for (const f of fs.readdirSync(out)) expect(fs.lstatSync(path.join(out, f)).uid).toBe(b.user.uid);
    expect(listing(b.rootDir)).toEqual([]);
  });

  it("check judges the user's token as the user would: no 'not by you', no chown 0", async () => {
    const b = userBox();
    const token = path.join(b.stateDir, 'acp_token.json');
    fs.writeFileSync(token, '{"access_token": "ya29.not-real", "expiry_date": 1}\n', { mode: 0o600 });
    const settings = path.join(b.stateDir, 'settings.json');
    fs.writeFileSync(settings, '{"auth": {"type": "oauth-personal"}}\n', { mode: 0o600 });
    own(b, token, settings);
    const r = await agyctl(['check'], b);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/not by you|chown 0|owned by uid/);
    expect(fs.lstatSync(token).uid).toBe(b.user.uid);
  });
});
