/**
 * `backup --archive` and `restore --archive` on the built binary: a file
 * round trip, stdout rules, a damaged archive refused before anything is
 * written, and the real restic (Debian package; .ci/run installs it) storing
 * the stream and giving it back, after which the sessions load in the
 * simulator.
 */

import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { agyctl, BIN, parseJson, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox, dirState } from '../../helpers/sim-conversations.js';

function box(): Sandbox {
  const sb = authedSandbox();
  return sb;
}

const conv = (sb: Sandbox): string => path.join(sb.stateDir, 'conversations');

describe('backup --archive FILE / restore --archive FILE', () => {
  it('round trip into another box: every session restored and proved by a fresh server', async () => {
    const from = box();
    const a = addConversation(from, 2);
    const b = addConversation(from, 1);
    const tar = path.join(from.root, 'agy.tar');
    const made = await agyctl(['backup', '--to', path.join(from.root, 'bk'), '--archive', tar, '--json'], from);
    expect(made.exitCode).toBe(0);
    expect((parseJson(made.stdout) as any).archive).toBe(tar);
    const listing = await execa('tar', ['tf', tar]);
    expect(listing.stdout.split('\n')[0]).toBe('manifest.json');
    expect(listing.stdout.split('\n').sort()).toEqual(
      ['manifest.json', `${a}.db`, `${a}.meta`, `${b}.db`, `${b}.meta`].sort(),
    );

    const to = box();
    const r = await agyctl(['restore', '--archive', tar, '--prove', '--json', '--from-other-source'], to);
    expect(r.exitCode).toBe(0);
    const doc = parseJson(r.stdout) as any;
    expect(doc.restore.snapshot).toBe(tar);
    expect(doc.prove.ok).toBe(true);
    expect(Object.fromEntries(doc.prove.sessions.map((s: any) => [s.id, s.replayed.user]))).toEqual({ [a]: 2, [b]: 1 });
    expect(fs.readdirSync(to.root).filter((n) => n.startsWith('agyctl-archive-'))).toEqual([]);
  });

  it('refuses --json with --archive - (stdout carries the tar) and an existing archive file', async () => {
    const sb = box();
    addConversation(sb, 1);
    const json = await agyctl(['backup', '--to', path.join(sb.root, 'bk'), '--archive', '-', '--json'], sb);
    expect(json.exitCode).toBe(2);
    expect((parseJson(json.stdout) as any).error.message).toMatch(/--json cannot be used with --archive -/);
    fs.writeFileSync(path.join(sb.root, 'old.tar'), 'mine');
    const exists = await agyctl(
      ['backup', '--to', path.join(sb.root, 'bk'), '--archive', path.join(sb.root, 'old.tar')],
      sb,
    );
    expect(exists.exitCode).toBe(2);
    expect(fs.readFileSync(path.join(sb.root, 'old.tar'), 'utf8')).toBe('mine');
    expect(fs.existsSync(path.join(sb.root, 'bk'))).toBe(false);
    for (const args of [
      ['restore'],
      ['restore', 'latest', '--archive', 'x.tar'],
      ['restore', '--archive', path.join(sb.root, 'none.tar')],
      ['restore', 'latest', '--dry-run', '--prove'],
    ]) {
      expect((await agyctl(args, sb)).exitCode, args.join(' ')).toBe(2);
    }
  });

  it('a reader that goes away mid-stream (EPIPE) is reported as archive-write-failed (exit 6); the snapshot is kept', async () => {
    const sb = box();
    addConversation(sb, 2, '/work/big', 2048); // far more than a pipe buffer: the writer must hit the closed pipe
    const bk = path.join(sb.root, 'bk');
    const r = await execa(
      'bash',
      [
        '-c',
        `node ${JSON.stringify(BIN)} backup --to ${JSON.stringify(bk)} --archive - | head -c 1000 >/dev/null; exit \${PIPESTATUS[0]}`,
      ],
      { env: sb.env, extendEnv: false, cwd: sb.root, reject: false, timeout: 45_000 },
    );
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toMatch(/writing its archive to stdout failed/);
    expect(fs.readdirSync(bk).filter((n) => /^\d{4}-/.test(n))).toHaveLength(1);
  });

  it('restore --archive DIR names --archive and its path, not the state dir (exit 2)', async () => {
    const sb = box();
    addConversation(sb, 1);
    const dir = path.join(sb.root, 'not-an-archive');
    fs.mkdirSync(dir);
    const r = await agyctl(['restore', '--archive', dir], sb);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`--archive ${dir} is a directory, not an archive file`);
    expect(r.stderr).toContain(`agyctl restore ${dir}`);
    expect(r.stderr).not.toContain(sb.stateDir);
  });

  it('a damaged archive is rejected before anything in the state dir changes (exit 6, archive-damaged)', async () => {
    const from = box();
    addConversation(from, 2);
    const tar = path.join(from.root, 'agy.tar');
    expect((await agyctl(['backup', '--to', path.join(from.root, 'bk'), '--archive', tar], from)).exitCode).toBe(0);
    const bytes = fs.readFileSync(tar);
    const dataAt = bytes.indexOf(Buffer.from('SQLite format 3\0', 'latin1')) + 600; // inside the database entry's data
    bytes[dataAt] ^= 0xff;
    fs.writeFileSync(tar, bytes);

    const to = box();
    const existing = addConversation(to, 1);
    const before = dirState(conv(to));
    const r = await agyctl(['restore', '--archive', tar, '--json'], to);
    expect(r.exitCode).toBe(6);
    expect((parseJson(r.stdout) as any).error.code).toBe('archive-damaged');
    expect((parseJson(r.stdout) as any).error.message).toMatch(/does not match its manifest hash/);
    expect(dirState(conv(to))).toEqual(before);
    expect(fs.existsSync(path.join(conv(to), `${existing}.db`))).toBe(true);
  });
});

const hasRestic = execa('restic', ['version'], { reject: false }).then((r) => r.exitCode === 0);

describe('restic round trip', () => {
  it('agyctl backup --archive - | restic backup --stdin; restic dump | agyctl restore --archive -; the sessions load', async () => {
    expect(await hasRestic, 'restic is not installed (apt-get install restic; .ci/run installs it)').toBe(true);
    const from = box();
    const a = addConversation(from, 3);
    const repo = path.join(from.root, 'restic-repo');
    const env = {
      ...from.env,
      RESTIC_REPOSITORY: repo,
      RESTIC_PASSWORD: 'test-only',
      RESTIC_CACHE_DIR: path.join(from.root, 'restic-cache'),
    };
    await execa('restic', ['init'], { env, extendEnv: false, timeout: 60_000 });
    const pipeline = await execa(
      'bash',
      [
        '-o',
        'pipefail',
        '-c',
        `node ${JSON.stringify(BIN)} backup --to ${JSON.stringify(path.join(from.root, 'bk'))} --archive - | restic backup --stdin --stdin-filename agy.tar`,
      ],
      { env, extendEnv: false, cwd: from.root, reject: false, timeout: 60_000 },
    );
    expect(pipeline.exitCode, pipeline.stderr).toBe(0);
    expect(pipeline.stderr).toMatch(/1 session\(s\): 1 snapshotted/); // the summary went to stderr

    const to = box();
    const toEnv = {
      ...to.env,
      RESTIC_REPOSITORY: repo,
      RESTIC_PASSWORD: 'test-only',
      RESTIC_CACHE_DIR: path.join(from.root, 'restic-cache'),
    };
    const back = await execa(
      'bash',
      [
        '-o',
        'pipefail',
        '-c',
        `restic dump latest agy.tar | node ${JSON.stringify(BIN)} restore --archive - --prove --from-other-source`,
      ],
      { env: toEnv, extendEnv: false, cwd: to.root, reject: false, timeout: 60_000 },
    );
    expect(back.exitCode, back.stderr).toBe(0);
    expect(back.stdout).toContain(`restored ${a}`);
    expect(back.stdout).toMatch(new RegExp(`ok +${a}: loaded, replayed 3 user and 3 agent messages`));
    expect(back.stdout).toContain('history not compared: no replay recorded');
  });
});
