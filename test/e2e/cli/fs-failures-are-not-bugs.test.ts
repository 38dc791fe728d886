/**
 * Ordinary file-system failures are not bugs. Each gets its
 * documented exit code (2 for bad paths and permissions, 6 for a full
 * backup destination), names the path and the fix, and never says
 * "Internal error". A full disk leaves no lock behind.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, agyctl, makeSandbox, parseJson, type RunResult, type Sandbox } from '../../helpers/cli.js';

const A = '11111111-1111-4111-8111-111111111111';
const LONG = 'x'.repeat(300);

let sandbox: Sandbox | undefined;

function conversation(sb: Sandbox, id = A): void {
  const dir = path.join(sb.stateDir, 'conversations');
  fs.mkdirSync(dir, { recursive: true });
  const db = new Database(path.join(dir, `${id}.db`));
  db.exec('CREATE TABLE steps (n INTEGER); INSERT INTO steps VALUES (1);');
  db.close();
  fs.writeFileSync(path.join(dir, `${id}.meta`), '{"cwd":"/work"}');
}

function expectOrdinary(r: RunResult, exit: number, code: string, mentions: string): void {
  expect(r.exitCode, r.stdout + r.stderr).toBe(exit);
  expect(r.stderr).not.toMatch(/Internal error|This is a bug/);
  const doc = parseJson(r.stdout) as { error: { code: string; message: string; hint?: string } };
  expect(doc.error.code).toBe(code);
  expect(doc.error.message).toContain(mentions);
  expect(doc.error.hint).toBeTruthy();
}

describe('a read-only HOME', () => {
  it('settings set-auth: fs-read-only naming the directory, with path and errno, not ENOENT from mkdir', async () => {
    sandbox = makeSandbox();
    fs.mkdirSync(sandbox.home, { recursive: true });
    await execa('mount', ['--bind', sandbox.home, sandbox.home], { timeout: 10_000 });
    try {
      await execa('mount', ['-o', 'remount,bind,ro', sandbox.home, sandbox.home], { timeout: 10_000 });
      const r = await agyctl(['settings', 'set-auth', 'oauth-personal', '--json'], sandbox);
      expectOrdinary(r, 2, 'fs-read-only', sandbox.home);
      const doc = parseJson(r.stdout) as { path: string; errno: string; error: { message: string } };
      expect(doc).toMatchObject({ path: sandbox.home, errno: 'EROFS' });
      expect(doc.error.message).not.toContain('ENOENT');
      const human = await agyctl(['settings', 'set-auth', 'oauth-personal'], sandbox);
      expect(human.stderr).toContain('the file system is read-only (EROFS)');
      expect(human.stderr).toContain('--state-dir');
    } finally {
      await execa('umount', [sandbox.home], { timeout: 10_000, reject: false });
    }
  });
});

describe('backup destinations that cannot be used', () => {
  it('--to a regular file: exit 2 naming the file', async () => {
    sandbox = makeSandbox();
    conversation(sandbox);
    const file = path.join(sandbox.root, 'not-a-dir');
    fs.writeFileSync(file, 'x');
    expectOrdinary(await agyctl(['backup', '--json', '--to', file], sandbox), 2, 'fs-not-a-directory', file);
    expectOrdinary(
      await agyctl(['backup', '--json', '--to', path.join(file, 'sub')], sandbox),
      2,
      'fs-not-a-directory',
      file,
    );
  });

  it('--to a directory on a read-only file system: exit 2 naming it', async () => {
    // A read-only bind mount, not a 0555 dir run as nobody: the test must not depend on whether
    // the checkout (and so the built agyctl) is reachable by another user, and root ignores modes.
    sandbox = makeSandbox();
    conversation(sandbox);
    const ro = path.join(sandbox.root, 'read-only');
    fs.mkdirSync(ro);
    await execa('mount', ['--bind', ro, ro], { timeout: 10_000 });
    try {
      await execa('mount', ['-o', 'remount,bind,ro', ro, ro], { timeout: 10_000 });
      const r = await agyctl(['backup', '--json', '--to', ro], sandbox);
      expectOrdinary(r, 2, 'fs-read-only', ro);
      expect(fs.readdirSync(ro)).toEqual([]);
    } finally {
      await execa('umount', [ro], { timeout: 10_000, reject: false });
    }
  });

  it('a full destination (file-size limit) is exit 6 and leaves no lock: the next run works at once', async () => {
    sandbox = makeSandbox();
    conversation(sandbox);
    const to = path.join(sandbox.root, 'backups');
    // ulimit -f 0: not one byte can be written, so even the lock file's write fails (SIGXFSZ ignored: EFBIG).
    const r = await execa(
      'bash',
      ['-c', `trap '' XFSZ; ulimit -f 0; exec "$@"`, 'bash', ...AGYCTL_ARGV, 'backup', '--json', '--to', to],
      { env: sandbox.env, extendEnv: false, reject: false, timeout: 45_000 },
    );
    expectOrdinary(
      { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) },
      6,
      'backup-write-failed',
      to,
    );
    expect(fs.readdirSync(to)).toEqual([]);
    const next = await agyctl(['backup', '--to', to], sandbox);
    expect(next.exitCode, next.stderr).toBe(0);
  });

  it('a name too long: backup --to and sessions --state-dir exit 2', async () => {
    sandbox = makeSandbox();
    conversation(sandbox);
    expectOrdinary(
      await agyctl(['backup', '--json', '--to', path.join(sandbox.root, LONG)], sandbox),
      2,
      'fs-name-too-long',
      LONG,
    );
    expectOrdinary(
      await agyctl(['sessions', '--json', '--state-dir', path.join(sandbox.root, LONG)], sandbox),
      2,
      'fs-name-too-long',
      LONG,
    );
  });
});

describe('a state dir that is a file', () => {
  it('sessions, backup and restore: exit 2 naming it', async () => {
    sandbox = makeSandbox();
    conversation(sandbox);
    const to = path.join(sandbox.root, 'backups');
    expect((await agyctl(['backup', '--to', to], sandbox)).exitCode).toBe(0);
    const file = path.join(sandbox.root, 'state-file');
    fs.writeFileSync(file, 'x');
    for (const args of [['sessions'], ['backup', '--to', to], ['restore', 'latest', '--from', to]]) {
      expectOrdinary(await agyctl([...args, '--json', '--state-dir', file], sandbox), 2, 'fs-not-a-directory', file);
    }
  });

  it('login: exit 2 naming it', async () => {
    sandbox = makeSandbox();
    const file = path.join(sandbox.root, 'box', '.gemini', 'antigravity-acp');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'x');
    const r = await agyctl(['login', '--json', '--state-dir', file], sandbox);
    expect(r.exitCode, r.stdout + r.stderr).toBe(2);
    expect(r.stderr + r.stdout).not.toMatch(/Internal error|This is a bug/);
    expect(r.stdout).toContain(file);
  });
});

describe('logout --local when the token path is a directory', () => {
  it('exit 2 naming it; the directory stays', async () => {
    sandbox = makeSandbox();
    const token = path.join(sandbox.stateDir, 'acp_token.json');
    fs.mkdirSync(token, { recursive: true });
    fs.writeFileSync(path.join(token, 'keep'), 'x');
    expectOrdinary(await agyctl(['logout', '--local', '--json'], sandbox), 2, 'fs-is-a-directory', token);
    expect(fs.existsSync(path.join(token, 'keep'))).toBe(true);
  });
});
