/**
 * Root on a user's state dir: the state dir belongs to
 * a user created for the run, who plants symlinks (created here and lchown'ed
 * to that user, as if they had made them), and agyctl runs as root, as it does when it
 * provisions a box (tests and CI run as root). agyctl must never write,
 * create, copy or read-for-copying through those links, must refuse with
 * exit 2 (`unsafe-symlink`) where the link is the file it was asked to
 * change, and what it creates there is 0600 and belongs to that user.
 *
 * @module-tag root
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseEvents, parseJson, type Sandbox } from '../../helpers/cli.js';
import { stateDirOwnerForFile } from '../../helpers/os-user.js';
import { makeTaggedDb, tagsOf } from '../../helpers/tagged-db.js';

/** The state dir's owner: a user created for this run (removed afterwards). */
const user = stateDirOwnerForFile('the root-on-a-user state dir tests');
const OWNER = user.uid;
const OWNER_GROUP = user.gid;
const A = '11111111-1111-4111-8111-111111111111';

/** A sandbox whose HOME, ~/.gemini and state dir belong to the user; a root-only `secret/` dir beside it. */
function userBox(): Sandbox & { secret: string; conv: string } {
  const sb = makeSandbox();
  fs.chmodSync(sb.root, 0o755);
  fs.mkdirSync(path.join(sb.stateDir, 'conversations'), { recursive: true, mode: 0o700 });
  for (const d of [sb.home, path.dirname(sb.stateDir), sb.stateDir, path.join(sb.stateDir, 'conversations')])
    fs.chownSync(d, OWNER, OWNER_GROUP);
  const secret = path.join(sb.root, 'secret');
  fs.mkdirSync(secret, { mode: 0o700 });
  return Object.assign(sb, { secret, conv: path.join(sb.stateDir, 'conversations') });
}

/** A symlink as the user would plant it. */
function plant(link: string, target: string): void {
  fs.symlinkSync(target, link);
  fs.lchownSync(link, OWNER, OWNER_GROUP);
}

/** A small conversation database with `rows` rows, owned by `uid`, mode 0600. */
function makeDb(file: string, rows: number, tag: string, uid = OWNER): void {
  makeTaggedDb(file, tag, rows, { uid, gid: uid === 0 ? 0 : OWNER_GROUP });
}

const tags = tagsOf;

const sha = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const modeOf = (file: string): number => fs.lstatSync(file).mode & 0o777;
const uidOf = (file: string): number => fs.lstatSync(file).uid;

async function expectUnsafeSymlink(args: string[], sb: Sandbox, link: string): Promise<void> {
  const r = await agyctl([...args, '--json'], sb, { timeoutMs: 30_000 });
  expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(2);
  // One document, or (login) an event stream ending in an `error` event.
  const doc = r.stdout.trimStart().startsWith('{\n') ? parseJson(r.stdout) : parseEvents(r.stdout).at(-1)!;
  const error = (doc.event === 'error' ? doc : doc.error) as { code: string; message: string; hint: string };
  expect(error.code).toBe('unsafe-symlink');
  expect(error.message).toContain(link);
  expect(error.hint).toContain(`rm ${link}`);
}

async function backupTo(
  sb: Sandbox,
  dir: string,
  extra: string[] = [],
): Promise<{ exitCode: number; json: any; stderr: string }> {
  const r = await agyctl(['backup', '--to', dir, '--json', ...extra], sb);
  return { exitCode: r.exitCode, json: r.stdout ? parseJson(r.stdout) : {}, stderr: r.stderr };
}

describe('settings set-auth as root', () => {
  it('settings.json -> a system file: refused with and without --force; the file keeps its bytes', async () => {
    const sb = userBox();
    const passwd = path.join(sb.secret, 'passwd');
    fs.writeFileSync(passwd, 'root:x:0:0:root:/root:/bin/bash\n', { mode: 0o644 });
    const settings = path.join(sb.stateDir, 'settings.json');
    plant(settings, passwd);
    await expectUnsafeSymlink(['settings', 'set-auth', 'gemini-api-key', '--force'], sb, settings);
    await expectUnsafeSymlink(['settings', 'set-auth', 'gemini-api-key'], sb, settings);
    expect(fs.readFileSync(passwd, 'utf8')).toBe('root:x:0:0:root:/root:/bin/bash\n');
    expect(fs.readdirSync(sb.stateDir)).toEqual(['conversations', 'settings.json']);
  });

  it('a link to a root-only JSON file is not edited in place; a dangling link creates nothing', async () => {
    const sb = userBox();
    const rootJson = path.join(sb.secret, 'root-settings.json');
    fs.writeFileSync(rootJson, '{"auth": {"type": "oauth-personal"}}\n', { mode: 0o600 });
    const settings = path.join(sb.stateDir, 'settings.json');
    plant(settings, rootJson);
    await expectUnsafeSymlink(['settings', 'set-auth', 'gemini-api-key'], sb, settings);
    expect(fs.readFileSync(rootJson, 'utf8')).toBe('{"auth": {"type": "oauth-personal"}}\n');

    fs.rmSync(settings);
    const nowhere = path.join(sb.secret, 'created-by-root.json');
    plant(settings, nowhere);
    await expectUnsafeSymlink(['settings', 'set-auth', 'gemini-api-key'], sb, settings);
    expect(fs.existsSync(nowhere)).toBe(false);
  });

  it('a new settings.json is 0600 and belongs to the state dir owner; so does a --force backup of a broken one', async () => {
    const sb = userBox();
    const settings = path.join(sb.stateDir, 'settings.json');
    const r = await agyctl(['settings', 'set-auth', 'gemini-api-key'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect([modeOf(settings), uidOf(settings)]).toEqual([0o600, OWNER]);

    fs.writeFileSync(settings, '{ broken', { mode: 0o600 });
    fs.chownSync(settings, OWNER, OWNER_GROUP);
    const forced = await agyctl(['settings', 'set-auth', 'oauth-personal', '--force', '--json'], sb);
    expect(forced.exitCode, forced.stderr).toBe(0);
    const backup = String((parseJson(forced.stdout).settings as Record<string, unknown>).backup);
    expect(fs.readFileSync(backup, 'utf8')).toBe('{ broken');
    expect([modeOf(backup), uidOf(backup)]).toEqual([0o600, OWNER]);
    expect([modeOf(settings), uidOf(settings)]).toEqual([0o600, OWNER]);
  });

  it('a missing state dir is created 0700 and given to the owner of the home it is in', async () => {
    const sb = makeSandbox();
    fs.chmodSync(sb.root, 0o755); // the user can reach their home
    fs.chownSync(sb.home, OWNER, OWNER_GROUP);
    const r = await agyctl(['settings', 'set-auth', 'gemini-api-key'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const d of [path.dirname(sb.stateDir), sb.stateDir]) expect([modeOf(d), uidOf(d)]).toEqual([0o700, OWNER]);
    expect(uidOf(path.join(sb.stateDir, 'settings.json'))).toBe(OWNER);
  });
});

describe('restore as root', () => {
  /** A snapshot of conversation A (tag "snap"), made while the state dir was untouched. */
  async function snapshotOfA(sb: Sandbox & { conv: string }): Promise<string> {
    makeDb(path.join(sb.conv, `${A}.db`), 4, 'snap');
    fs.writeFileSync(path.join(sb.conv, `${A}.meta`), JSON.stringify({ cwd: '/work/a' }));
    const b = await backupTo(sb, path.join(sb.root, 'bk'));
    expect(b.exitCode, b.stderr).toBe(0);
    return b.json.snapshot.path as string;
  }

  it('conversations/<id>.db linked to a root-only database: refused, nothing copied, the link and the database stay', async () => {
    const sb = userBox();
    const snap = await snapshotOfA(sb);
    const rootDb = path.join(sb.secret, 'root-only.db');
    makeDb(rootDb, 3, 'root-secret', 0);
    const before = sha(rootDb);
    fs.rmSync(path.join(sb.conv, `${A}.db`));
    plant(path.join(sb.conv, `${A}.db`), rootDb);
    await expectUnsafeSymlink(['restore', snap], sb, path.join(sb.conv, `${A}.db`));
    expect(fs.readdirSync(sb.conv).filter((n) => n.includes('pre-restore'))).toEqual([]);
    expect(fs.lstatSync(path.join(sb.conv, `${A}.db`)).isSymbolicLink()).toBe(true);
    expect(sha(rootDb)).toBe(before);
  });

  it("planted .<id>.db.restore-<ms>.tmp links are never followed; restored files are 0600 and the state dir owner's", async () => {
    const sb = userBox();
    const snap = await snapshotOfA(sb);
    makeDb(path.join(sb.conv, `${A}.db.new`), 2, 'current');
    fs.renameSync(path.join(sb.conv, `${A}.db.new`), path.join(sb.conv, `${A}.db`));
    const victim = path.join(sb.secret, 'victim');
    fs.writeFileSync(victim, 'root data\n', { mode: 0o600 });
    // One link for every millisecond of the next 30 s: whichever temp name restore picks is already a link.
    const now = Date.now();
    for (let t = now; t < now + 30_000; t++) {
      plant(path.join(sb.conv, `.${A}.db.restore-${new Date(t).toISOString().replace(/:/g, '-')}.tmp`), victim);
    }
    const r = await agyctl(['restore', snap, '--json'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fs.readFileSync(victim, 'utf8')).toBe('root data\n');
    const db = path.join(sb.conv, `${A}.db`);
    expect(fs.lstatSync(db).isFile()).toBe(true);
    expect(tags(db)).toEqual(['snap']);
    const restored = (
      (parseJson(r.stdout).restore as Record<string, unknown>).sessions as Array<{ preRestore: string }>
    )[0]!;
    expect(tags(restored.preRestore)).toEqual(['current']);
    for (const f of [db, restored.preRestore, path.join(sb.conv, `${A}.meta`)])
      expect([path.basename(f), modeOf(f), uidOf(f)]).toEqual([path.basename(f), 0o600, OWNER]);
    expect(fs.readdirSync(sb.conv).filter((n) => n.startsWith('.agyctl-'))).toEqual([]);
  });

  it('a missing conversations/ is created 0700 for the state dir owner', async () => {
    const sb = userBox();
    const snap = await snapshotOfA(sb);
    fs.rmSync(sb.conv, { recursive: true });
    const r = await agyctl(['restore', snap], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect([modeOf(sb.conv), uidOf(sb.conv)]).toEqual([0o700, OWNER]);
    expect([modeOf(path.join(sb.conv, `${A}.db`)), uidOf(path.join(sb.conv, `${A}.db`))]).toEqual([0o600, OWNER]);
  });
});

describe('backup as root', () => {
  it('snapshot files are 0600 and snapshot dirs 0700 under umask 022', async () => {
    const sb = userBox();
    makeDb(path.join(sb.conv, `${A}.db`), 3, 'a');
    fs.writeFileSync(path.join(sb.conv, `${A}.meta`), JSON.stringify({ cwd: '/work/a' }));
    const bk = path.join(sb.root, 'bk');
    const b = await backupTo(sb, bk);
    expect(b.exitCode, b.stderr).toBe(0);
    const dir = b.json.snapshot.path as string;
    expect([modeOf(bk), modeOf(dir)]).toEqual([0o700, 0o700]);
    for (const f of fs.readdirSync(dir)) expect([f, modeOf(path.join(dir, f))]).toEqual([f, 0o600]);
    expect(fs.readdirSync(dir).sort()).toEqual([`${A}.db`, `${A}.meta`, 'manifest.json']);
  });

  it('a conversation database linked out of the state dir is not backed up (the session fails, exit 6)', async () => {
    const sb = userBox();
    const rootDb = path.join(sb.secret, 'root-only.db');
    makeDb(rootDb, 3, 'root-secret', 0);
    plant(path.join(sb.conv, `${A}.db`), rootDb);
    const b = await backupTo(sb, path.join(sb.root, 'bk'));
    expect(b.exitCode, b.stderr).toBe(6);
    expect(b.json.failed[0]).toMatchObject({ id: A, reason: expect.stringMatching(/symlink/) });
    expect(fs.readdirSync(b.json.snapshot.path as string)).toEqual(['manifest.json']);
  });

  it('a planted lock link is refused (exit 2) and its target left alone', async () => {
    const sb = userBox();
    makeDb(path.join(sb.conv, `${A}.db`), 1, 'a');
    const bk = path.join(sb.root, 'bk');
    fs.mkdirSync(bk);
    fs.chownSync(bk, OWNER, OWNER_GROUP); // a destination the user can write to
    const victim = path.join(sb.secret, 'victim');
    fs.writeFileSync(victim, 'root data\n', { mode: 0o600 });
    fs.utimesSync(victim, new Date(0), new Date(0));
    plant(path.join(bk, '.lock'), victim);
    await expectUnsafeSymlink(['backup', '--to', bk], sb, path.join(bk, '.lock'));
    expect(fs.readFileSync(victim, 'utf8')).toBe('root data\n');
    expect(fs.readdirSync(bk)).toEqual(['.lock']);
  });

  it('planted snapshot dirs (a link, or a dir of links) are never read or reused; planted .partial links go, their targets stay', async () => {
    const sb = userBox();
    const db = path.join(sb.conv, `${A}.db`);
    makeDb(db, 3, 'real');
    const old = new Date(Date.now() - 3_600_000);
    fs.utimesSync(db, old, old);
    const bk = path.join(sb.root, 'bk');
    const first = await backupTo(sb, bk);
    expect(first.exitCode, first.stderr).toBe(0);
    fs.chownSync(bk, OWNER, OWNER_GROUP);
    // A fake "newer snapshot" whose manifest says A is unchanged, pointing at root's database.
    const rootDb = path.join(sb.secret, 'root-only.db');
    makeDb(rootDb, 3, 'root-secret', 0);
    const manifest = JSON.parse(fs.readFileSync(path.join(first.json.snapshot.path, 'manifest.json'), 'utf8'));
    manifest.sessions[0].bytes = fs.statSync(rootDb).size;
    const fake = path.join(sb.secret, 'fake-snapshot');
    fs.mkdirSync(fake);
    fs.writeFileSync(path.join(fake, 'manifest.json'), JSON.stringify(manifest));
    fs.copyFileSync(rootDb, path.join(fake, `${A}.db`));
    plant(path.join(bk, '2099-01-01T00-00-00.000Z'), fake);
    const dirOfLinks = path.join(bk, '2098-01-01T00-00-00.000Z');
    fs.mkdirSync(dirOfLinks);
    plant(path.join(dirOfLinks, 'manifest.json'), path.join(fake, 'manifest.json'));
    plant(path.join(dirOfLinks, `${A}.db`), path.join(fake, `${A}.db`));
    fs.chownSync(dirOfLinks, OWNER, OWNER_GROUP);
    const keep = path.join(sb.secret, 'keep');
    fs.mkdirSync(keep);
    fs.writeFileSync(path.join(keep, 'file'), 'x');
    plant(path.join(bk, '.2097-01-01T00-00-00.000Z.partial'), keep);

    const second = await backupTo(sb, bk);
    expect(second.exitCode, second.stderr).toBe(0);
    const snapDb = path.join(second.json.snapshot.path, `${A}.db`);
    expect(fs.lstatSync(snapDb).isFile()).toBe(true);
    expect(tags(snapDb)).toEqual(['real']);
    // Reused, if at all, from the real first snapshot: never from the planted ones.
    expect(second.json.sessions[0].reusedFrom ?? first.json.snapshot.name).toBe(first.json.snapshot.name);
    expect(fs.readFileSync(path.join(keep, 'file'), 'utf8')).toBe('x');
    expect(sha(path.join(fake, `${A}.db`))).toBe(sha(rootDb));
  });
});

describe('token links', () => {
  it('logout (--local and via the server) refuses a token file that is a link; the linked credentials stay', async () => {
    const sb = userBox();
    const rootToken = path.join(sb.secret, 'acp_token.json');
    fs.writeFileSync(rootToken, '{"refresh_token": "root-not-real"}\n', { mode: 0o600 });
    const token = path.join(sb.stateDir, 'acp_token.json');
    plant(token, rootToken);
    await expectUnsafeSymlink(['logout', '--local'], sb, token);
    await expectUnsafeSymlink(['logout'], sb, token);
    expect(fs.readFileSync(rootToken, 'utf8')).toBe('{"refresh_token": "root-not-real"}\n');
    expect(fs.lstatSync(token).isSymbolicLink()).toBe(true);
  });

  it('login refuses a token file that is a link before starting the server', async () => {
    const sb = userBox();
    fs.writeFileSync(path.join(sb.stateDir, 'settings.json'), '{"auth": {"type": "oauth-personal"}}\n');
    const rootToken = path.join(sb.secret, 'acp_token.json');
    fs.writeFileSync(rootToken, '{"refresh_token": "root-not-real"}\n', { mode: 0o600 });
    const token = path.join(sb.stateDir, 'acp_token.json');
    plant(token, rootToken);
    await expectUnsafeSymlink(['login', '--timeout', '10s'], sb, token);
    expect(fs.readFileSync(rootToken, 'utf8')).toBe('{"refresh_token": "root-not-real"}\n');
  });
});

describe('--trace FILE', () => {
  it('refuses a symlink and leaves its target alone', async () => {
    const sb = userBox();
    const victim = path.join(sb.secret, 'victim');
    fs.writeFileSync(victim, 'root data\n', { mode: 0o600 });
    const trace = path.join(sb.home, 'trace.jsonl');
    plant(trace, victim);
    await expectUnsafeSymlink(['--trace', trace, 'settings', 'show'], sb, trace);
    expect(fs.readFileSync(victim, 'utf8')).toBe('root data\n');
  });

  it('a new trace is 0600; an existing wider one is narrowed to 0600', async () => {
    const sb = userBox();
    const trace = path.join(sb.root, 'trace.jsonl');
    fs.writeFileSync(trace, '', { mode: 0o644 });
    fs.chmodSync(trace, 0o644);
    await agyctl(['--trace', trace, 'settings', 'show'], sb);
    expect(modeOf(trace)).toBe(0o600);
    const fresh = path.join(sb.root, 'fresh.jsonl');
    await agyctl(['--trace', fresh, 'settings', 'show'], sb);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(modeOf(fresh)).toBe(0o600);
  });
});
