/**
 * What a new user meets first with backup, restore and sessions: dry runs
 * that say what a run would do and exit as it would, one option check for
 * a dry run and a run, help that shows real snapshot names and true exit
 * codes, and .meta text that never reaches the terminal raw.
 */

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, parseJson, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

const kills: Array<() => void> = [];
afterEach(() => {
  for (const k of kills.splice(0)) k();
});

function box(): Sandbox {
  const sb = authedSandbox();
  return sb;
}

describe('backup --dry-run', () => {
  it('before the first backup says the run would create the backup directory, and creates nothing', async () => {
    const sb = box();
    addConversation(sb, 1);
    const bk = path.join(sb.root, 'never-made', 'backups');
    const r = await agyctl(['backup', '--to', bk, '--dry-run'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`would create the backup directory ${bk}`);
    expect(r.stdout).toMatch(/would snapshot 1 session/);
    const json = await agyctl(['backup', '--to', bk, '--dry-run', '--json'], sb);
    expect(parseJson(json.stdout)).toMatchObject({ dryRun: true, createsBackupDir: true });
    expect(fs.existsSync(path.join(sb.root, 'never-made'))).toBe(false);
  });

  it.each([
    [['--jobs', 'abc'], /--jobs must be a whole number/],
    [['--jobs', '0'], /--jobs must be between 1 and 64/],
    [['--busy-timeout', 'forever'], /--busy-timeout must be a duration/],
  ])('rejects %j exactly as a real run does (exit 2)', async (flags, message) => {
    const sb = box();
    addConversation(sb, 1);
    const bk = path.join(sb.root, 'bk');
    const dry = await agyctl(['backup', '--to', bk, '--dry-run', ...flags], sb);
    const real = await agyctl(['backup', '--to', bk, ...flags], sb);
    expect(dry.exitCode).toBe(2);
    expect(real.exitCode).toBe(2);
    expect(dry.stderr).toMatch(message);
    expect(dry.stderr).toBe(real.stderr);
  });
});

describe('restore --dry-run', () => {
  it('says what would change, and exits 6 when a real restore would refuse (0 with --force)', async () => {
    const sb = box();
    const ids = [addConversation(sb, 1), addConversation(sb, 2), addConversation(sb, 1)];
    const bk = path.join(sb.root, 'bk');
    expect((await agyctl(['backup', '--to', bk], sb)).exitCode).toBe(0);
    const plain = await agyctl(['restore', 'latest', '--from', bk, '--dry-run'], sb);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).not.toMatch(/would change nothing/);
    // Restored right after the backup: each holds the snapshot's content already, and the headline says so.
    expect(plain.stdout).toMatch(/would change no conversation; 3 hold the same content already:/);
    expect(plain.stdout).not.toMatch(/would replace/);

    const db = path.join(sb.stateDir, 'conversations', `${ids[0]}.db`);
    const holder = spawn(
      process.execPath,
      ['-e', `require('fs').openSync(${JSON.stringify(db)}, 'r'); console.log('open'); setInterval(() => {}, 1000)`],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    kills.push(() => holder.kill('SIGKILL'));
    await new Promise((resolve) => holder.stdout!.once('data', resolve));
    const dry = await agyctl(['restore', 'latest', '--from', bk, '--dry-run'], sb);
    expect(dry.stdout).toMatch(/a real restore would refuse \(exit 6\)/);
    expect(dry.exitCode).toBe(6);
    const real = await agyctl(['restore', 'latest', '--from', bk], sb);
    expect(real.exitCode).toBe(6);
    const forced = await agyctl(['restore', 'latest', '--from', bk, '--dry-run', '--force'], sb);
    expect(forced.exitCode).toBe(0);
  });
});

describe('help and messages that are true', () => {
  it('restore --help and backup verify --help show snapshot names as backup makes them', async () => {
    const sb = box();
    for (const argv of [
      ['restore', '--help'],
      ['backup', 'verify', '--help'],
    ]) {
      const r = await agyctl(argv, sb);
      expect(r.stdout).not.toContain('20260903T101500Z');
      expect(r.stdout).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z/);
    }
  });

  it('sessions: no conversations/ yet exits 0; a missing state dir exits 2 saying so; help says the same', async () => {
    const sb = box();
    const none = await agyctl(['sessions'], sb);
    expect(none.exitCode).toBe(0);
    const missing = await agyctl(['sessions', '--state-dir', path.join(sb.root, 'nope')], sb);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`The state dir "${path.join(sb.root, 'nope')}" does not exist.`);
    expect(missing.stderr).not.toMatch(/No conversations directory/);
    const help = await agyctl(['sessions', '--help'], sb);
    expect(help.stdout).not.toMatch(/no conversations directory/);
    expect(help.stdout).toMatch(/state dir does not exist/);
  });

  it('sessions prints a .meta cwd with escape sequences sanitized', async () => {
    const sb = box();
    const id = addConversation(sb, 1, '/work/\u001b]0;pwned\u0007\u001b[2Jevil');
    const r = await agyctl(['sessions'], sb);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(id);
    expect(r.stdout).toContain('/work/evil');
    expect(r.stdout).not.toMatch(/\u001b|\u0007/);
  });
});
