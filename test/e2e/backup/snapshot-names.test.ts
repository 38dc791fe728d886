/**
 * Every command that takes a snapshot name (restore, backup verify,
 * sessions export) answers a wrong one the same way: a name that does not
 * exist lists the snapshots there are; an archive where a directory belongs
 * is named as one, with --archive suggested; `DIR/latest` is the newest
 * snapshot in DIR, and a DIR the user cannot read is that error (EACCES),
 * never a path glued under the backup dir. A snapshot from a newer agyctl
 * gets one exit code and one message, as a directory and as an archive.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, agyctl, parseJson, type Sandbox } from '../../helpers/cli.js';
import { createUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

async function withSnapshot(): Promise<{ sb: Sandbox; bk: string; name: string }> {
  const sb = authedSandbox();
  addConversation(sb, 1);
  const bk = path.join(sb.root, 'bk');
  const r = await agyctl(['backup', '--to', bk, '--json'], sb);
  expect(r.exitCode, r.stderr).toBe(0);
  return { sb, bk, name: path.basename((parseJson(r.stdout) as any).snapshot.path as string) };
}

const COMMANDS = [
  ['restore', '--dry-run'],
  ['backup', 'verify'],
  ['sessions', 'export', '--out', '-'],
] as const;
const withArg = (cmd: readonly string[], arg: string, bk: string): string[] => [
  ...cmd.slice(0, cmd[0] === 'restore' ? 1 : 2),
  arg,
  ...cmd.slice(cmd[0] === 'restore' ? 1 : 2),
  '--from',
  bk,
];

describe('a snapshot name that does not exist', () => {
  it('lists the snapshots there are, in every command that takes one (exit 2)', async () => {
    const { sb, bk, name } = await withSnapshot();
    for (const cmd of COMMANDS) {
      const r = await agyctl(withArg(cmd, '2026-01-01T00-00-00.000Z', bk), sb);
      expect(r.exitCode, `${cmd.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, cmd.join(' ')).toMatch(/^error: No snapshot 2026-01-01T00-00-00\.000Z/);
      expect(r.stderr, cmd.join(' ')).toContain(`hint: the snapshots in ${bk} are: ${name}`);
      expect(r.stderr, cmd.join(' ')).toContain('agyctl backup list');
    }
  });

  it('an archive where a directory belongs is named as one, with --archive suggested', async () => {
    const { sb, bk } = await withSnapshot();
    const tar = path.join(sb.root, 'snap.tar');
    expect((await agyctl(['backup', '--to', bk, '--archive', tar], sb)).exitCode).toBe(0);
    for (const cmd of COMMANDS) {
      const r = await agyctl(withArg(cmd, tar, bk), sb);
      expect(r.exitCode, cmd.join(' ')).toBe(2);
      expect(r.stderr, cmd.join(' ')).toContain(`error: ${tar} is a file (an archive?), not a snapshot directory.`);
      expect(r.stderr, cmd.join(' ')).toContain(`--archive ${tar}`);
    }
  });

  it('DIR/latest is the newest snapshot in DIR, not "latest" glued under the backup dir', async () => {
    const { sb, bk, name } = await withSnapshot();
    const r = await agyctl(['restore', path.join(bk, 'latest'), '--dry-run'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(path.join(bk, name));
  });
});

describe('as a user, a backup dir under /root', () => {
  it('is the permission error it is (exit 2, fs-permission-denied), not "No snapshot"', async () => {
    requireRoot('these tests');
    await useReadableApp();
    const { sb, bk } = await withSnapshot();
    const user = createUser(sb.home);
    try {
      const hidden = path.join(sb.root, 'private');
      fs.mkdirSync(hidden, { mode: 0o700 });
      fs.renameSync(bk, path.join(hidden, 'bk'));
      fs.chmodSync(sb.root, 0o755);
      const userHome = path.join(sb.root, 'u');
      fs.mkdirSync(userHome);
      fs.chownSync(userHome, user.uid, user.gid);
      const r = await execa(
        AGYCTL_ARGV[0]!,
        [...AGYCTL_ARGV.slice(1), 'restore', path.join(hidden, 'bk', 'latest'), '--dry-run', '--json'],
        {
          env: { ...sb.env, HOME: userHome },
          extendEnv: false,
          uid: user.uid,
          gid: user.gid,
          cwd: userHome,
          reject: false,
          timeout: 30_000,
        },
      );
      expect(r.exitCode, String(r.stderr)).toBe(2);
      const err = (parseJson(String(r.stdout)) as any).error;
      expect(err.code).toBe('fs-permission-denied');
      expect(err.message).toContain(path.join(hidden, 'bk'));
      expect(err.message).not.toContain(path.join(userHome, '.local'));
    } finally {
      user.remove();
    }
  });
});

describe('a snapshot from a newer agyctl', () => {
  it('gets one exit code and one message, as a directory and as an archive', async () => {
    const { sb, bk, name } = await withSnapshot();
    const tar = path.join(sb.root, 'snap.tar');
    expect((await agyctl(['backup', '--to', bk, '--archive', tar], sb)).exitCode).toBe(0);
    const manifest = path.join(bk, name, 'manifest.json');
    fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replace(/"schemaVersion": \d+/, '"schemaVersion": 9'));
    const bytes = fs.readFileSync(tar);
    const at = bytes.indexOf('"schemaVersion": ');
    expect(at).toBeGreaterThan(0);
    bytes.write('9', at + '"schemaVersion": '.length);
    fs.writeFileSync(tar, bytes);

    const dir = await agyctl(['restore', path.join(bk, name), '--dry-run', '--json'], sb);
    const archive = await agyctl(['restore', '--archive', tar, '--dry-run', '--json'], sb);
    for (const r of [dir, archive]) {
      expect(r.exitCode, r.stdout).toBe(2);
      const err = (parseJson(r.stdout) as any).error;
      expect(err.message).toMatch(/manifest\.json has schemaVersion 9; this agyctl reads \d+$/);
      expect(err.hint).toBe('use a newer agyctl to read this snapshot');
    }
    expect((parseJson(dir.stdout) as any).error.code).toBe((parseJson(archive.stdout) as any).error.code);
  });
});
