import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { splitCommandLine } from '../../src/acp/resolve.js';
import { parseDurationOption } from '../../src/cli/parse-options.js';
import { defaultBackupDir, resolveStateDir, serverHomeFor } from '../../src/core/paths.js';
import { resolveServerCommand } from '../../src/profiles/server-start.js';
import { formatDuration, MAX_DURATION_MS, parseDurationText } from '../../src/util/duration.js';
import { writeFileAtomic } from '../../src/util/os/atomic-write.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-util-');

describe('durations', () => {
  it('parses systemd.time(7) spellings, alone and combined', () => {
    const timeoutFlag = (text: string): number => parseDurationOption('--timeout', text);
    expect(timeoutFlag('90s')).toBe(90_000);
    expect(timeoutFlag('5min')).toBe(300_000);
    expect(timeoutFlag('2min')).toBe(120_000);
    expect(timeoutFlag('10m')).toBe(600_000);
    expect(timeoutFlag('1h30min')).toBe(5_400_000);
    expect(timeoutFlag('1h 30min')).toBe(5_400_000);
    expect(timeoutFlag('1h30m')).toBe(5_400_000);
    expect(timeoutFlag('250ms')).toBe(250);
    expect(timeoutFlag('1500us')).toBe(2);
    expect(timeoutFlag('5 sec')).toBe(5_000);
    expect(timeoutFlag('2 minutes')).toBe(120_000);
    expect(timeoutFlag('1 second')).toBe(1_000);
    expect(timeoutFlag('2hr')).toBe(7_200_000);
    expect(timeoutFlag('3 hours')).toBe(10_800_000);
    expect(timeoutFlag('1d')).toBe(86_400_000);
    expect(timeoutFlag('2 days')).toBe(172_800_000);
    expect(timeoutFlag('1.5h')).toBe(5_400_000);
    for (const bad of ['ten', '5x', '', '5MIN', '-5s', '5s5', 'min', '1h,30min'])
      expect(() => timeoutFlag(bad), bad).toThrow(/--timeout must be a duration like 90s/);
  });

  it('calls a bare number what it is: a value without a unit', () => {
    expect(parseDurationText('90')).toEqual({ ok: false, reason: 'no-unit' });
    expect(parseDurationText(' 1.5 ')).toEqual({ ok: false, reason: 'no-unit' });
    expect(parseDurationText('90x')).toEqual({ ok: false, reason: 'malformed' });
  });

  it('formats short waits truthfully and long ones compactly', () => {
    expect(formatDuration(1)).toBe('1ms');
    expect(formatDuration(999)).toBe('999ms');
    expect(formatDuration(1_500)).toBe('2s');
    expect(formatDuration(5_000)).toBe('5s');
    expect(formatDuration(59_000)).toBe('59s');
    expect(formatDuration(125_000)).toBe('2m05s');
    expect(formatDuration(3_600_000 * 3 + 600_000)).toBe('3h10m');
    expect(formatDuration(MAX_DURATION_MS)).toBe('24d');
    expect(formatDuration(86_400_000 * 2 + 3_600_000 * 4)).toBe('2d4h');
    expect(formatDuration(1_796_283_117_000)).toBe('56y350d');
    expect(formatDuration(86_400_000 * 365)).toBe('1y');
  });
});

describe('paths', () => {
  // HOME must exist and be a directory: a real one stands in for /home/u.
  let home = '';
  let env = { HOME: home };
  beforeEach(() => {
    home = tmp();
    env = { HOME: home };
  });
  it('derives the state dir from HOME, AGYCTL_STATE_DIR or the flag', () => {
    expect(resolveStateDir(undefined, env, '/')).toBe(`${home}/.gemini/antigravity-acp`);
    expect(resolveStateDir(undefined, { ...env, AGYCTL_STATE_DIR: '/srv/s' }, '/')).toBe('/srv/s');
    expect(resolveStateDir('rel', env, '/work')).toBe('/work/rel');
    expect(resolveStateDir('~/x', env, '/')).toBe(`${home}/x`);
  });
  it('refuses a HOME that does not exist or is a file (exit 2, a hint about HOME), never making it', () => {
    const missing = path.join(home, 'nonexistent-home');
    expect(() => resolveStateDir(undefined, { HOME: missing }, '/')).toThrow(
      /HOME .*nonexistent-home.* does not exist/,
    );
    expect(fs.existsSync(missing)).toBe(false);
    const file = path.join(home, 'a-file');
    fs.writeFileSync(file, '');
    for (const HOME of [file, path.join(file, 'below')]) {
      let err: unknown;
      try {
        defaultBackupDir({ HOME });
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({
        exit: 2,
        message: expect.stringMatching(/is not a directory/),
        hint: expect.stringMatching(/set HOME/),
      });
    }
    // An explicit state dir does not need HOME.
    expect(resolveStateDir('/srv/s', { HOME: missing }, '/')).toBe('/srv/s');
  });
  it('steers the server by HOME only when the state dir has its shape', () => {
    expect(serverHomeFor('/srv/box/.gemini/antigravity-acp')).toBe('/srv/box');
    expect(serverHomeFor('/srv/elsewhere')).toBeUndefined();
  });
  it('puts backups under XDG_STATE_HOME when set', () => {
    expect(defaultBackupDir({ HOME: home, XDG_STATE_HOME: '/x' })).toBe('/x/agyctl/backups');
    expect(defaultBackupDir({ HOME: home })).toBe(`${home}/.local/state/agyctl/backups`);
  });
});

describe('server command', () => {
  it('splits like a shell: quotes and variables, no operators', () => {
    expect(splitCommandLine(`node "/opt/my dir/sim" --debug`, {})).toEqual(['node', '/opt/my dir/sim', '--debug']);
    expect(splitCommandLine('$D/agy --notices', { D: '/opt' })).toEqual(['/opt/agy', '--notices']);
    expect(() => splitCommandLine('agy | tee log', {})).toThrow(/plain command line/);
  });
  it('refuses an unterminated quote instead of dropping it', () => {
    expect(() => splitCommandLine('node "/opt/my dir/sim --debug', {})).toThrow(/unterminated " quote/);
    expect(() => splitCommandLine("node '/opt/sim", {})).toThrow(/unterminated ' quote/);
    expect(splitCommandLine(`node "it's" 'say "hi"' a\\"b`, {})).toEqual(['node', "it's", 'say "hi"', 'a"b']);
  });
  it('exits 4 with a hint when nothing is found', () => {
    try {
      resolveServerCommand(undefined, { PATH: '/nonexistent' }, '/');
      expect.unreachable();
    } catch (err) {
      expect((err as { exit: number; hint: string }).exit).toBe(4);
      expect((err as { hint: string }).hint).toMatch(/--server/);
    }
  });
  it('finds a default name on PATH', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'agy_acp_server.par'), '#!/bin/sh\n', { mode: 0o755 });
    expect(resolveServerCommand(undefined, { PATH: dir }, '/').file).toBe(path.join(dir, 'agy_acp_server.par'));
  });
});

describe('atomic write', () => {
  it('replaces content, keeps an existing mode and never writes through a symlink (the link is replaced)', () => {
    const dir = tmp();
    const plain = path.join(dir, 'plain.json');
    fs.writeFileSync(plain, 'old', { mode: 0o640 });
    fs.chmodSync(plain, 0o640);
    writeFileAtomic(plain, 'new');
    expect(fs.readFileSync(plain, 'utf8')).toBe('new');
    expect(fs.statSync(plain).mode & 0o777).toBe(0o640);
    const target = path.join(dir, 'real.json');
    fs.writeFileSync(target, 'old', { mode: 0o600 });
    const link = path.join(dir, 'link.json');
    fs.symlinkSync(target, link);
    writeFileAtomic(link, 'new');
    expect(fs.lstatSync(link).isFile()).toBe(true);
    expect(fs.readFileSync(link, 'utf8')).toBe('new');
    expect(fs.readFileSync(target, 'utf8')).toBe('old');
    writeFileAtomic(path.join(dir, 'fresh.json'), 'x', { mode: 0o644 });
    expect(fs.statSync(path.join(dir, 'fresh.json')).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
