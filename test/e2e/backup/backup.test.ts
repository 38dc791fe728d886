/**
 * `agyctl sessions`, `backup`, `backup verify` and `restore` on the built
 * binary, with real SQLite and live writers (test/fixtures/wal-writer.mjs)
 * holding WAL databases open without checkpointing.
 */

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, agyctl, makeSandbox, parseJson, type Sandbox, spawnAgyctl } from '../../helpers/cli.js';
import { startWriter, type Writer } from '../../helpers/wal-writer.js';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

let sandbox: Sandbox | undefined;
const writers: Writer[] = [];
afterEach(async () => {
  for (const w of writers.splice(0)) await w.stop();
  sandbox = undefined;
});

const conv = (sb: Sandbox, file = ''): string => path.join(sb.stateDir, 'conversations', file);
const backups = (sb: Sandbox): string => path.join(sb.root, 'backups');

async function live(sb: Sandbox, id: string, args: string[] = []): Promise<Writer> {
  fs.mkdirSync(conv(sb), { recursive: true });
  if (!fs.existsSync(conv(sb, `${id}.meta`)))
    fs.writeFileSync(conv(sb, `${id}.meta`), JSON.stringify({ cwd: `/work/${id.slice(0, 4)}` }));
  const w = await startWriter(conv(sb, `${id}.db`), ['--interval-ms', '60000', ...args]);
  writers.push(w);
  return w;
}

/** A conversation left as a killed server leaves it (WAL not checkpointed), its files quiet for an hour. */
async function idle(sb: Sandbox, id: string, rows = 5): Promise<number> {
  const w = await live(sb, id, ['--initial-rows', String(rows)]);
  writers.splice(writers.indexOf(w), 1);
  const total = await w.stop();
  const old = new Date(Date.now() - 3_600_000);
  for (const f of [`${id}.db`, `${id}.db-wal`]) if (fs.existsSync(conv(sb, f))) fs.utimesSync(conv(sb, f), old, old);
  return total;
}

function count(file: string, table = 'steps'): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

async function backup(sb: Sandbox, extra: string[] = []): Promise<{ exitCode: number; json: any; stderr: string }> {
  const r = await agyctl(['backup', '--to', backups(sb), '--json', ...extra], sb);
  return { exitCode: r.exitCode, json: parseJson(r.stdout), stderr: r.stderr };
}

const snapshotDirs = (sb: Sandbox): string[] =>
  fs
    .readdirSync(backups(sb))
    .filter((n) => /^\d{4}-/.test(n))
    .sort();

describe('agyctl sessions', () => {
  it('lists conversations newest first with cwd, sizes, holder pids and broken entries', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, B, 3);
    const w = await live(sandbox, A, ['--initial-rows', '2']);
    fs.writeFileSync(conv(sandbox, '33333333-3333-4333-8333-333333333333.db'), 'garbage');
    fs.utimesSync(conv(sandbox, '33333333-3333-4333-8333-333333333333.db'), new Date(0), new Date(0));
    const r = await agyctl(['sessions', '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const doc = parseJson(r.stdout) as any;
    expect(doc.ok).toBe(true);
    expect(doc.sessions.map((s: any) => s.id)).toEqual([A, B, '33333333-3333-4333-8333-333333333333']);
    expect(doc.sessions[0]).toMatchObject({ id: A, cwd: '/work/1111', openBy: [w.pid], problem: null });
    expect(doc.sessions[0].bytes).toBe(doc.sessions[0].dbBytes + doc.sessions[0].walBytes);
    expect(doc.sessions[1]).toMatchObject({ id: B, openBy: [] });
    expect(doc.sessions[2].problem).toMatch(/not a SQLite database/);
    const human = await agyctl(['sessions'], sandbox);
    expect(human.stdout).toContain(A);
    expect(human.stdout).toMatch(/problem: not a SQLite database/);
  });

  it('a missing state dir is a usage error naming --state-dir', async () => {
    sandbox = makeSandbox();
    const r = await agyctl(['sessions'], sandbox);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--state-dir');
  });
});

describe('agyctl backup', () => {
  it("snapshots a live WAL-only database: seven tables, the writer's row counts, a manifest, no server files touched", async () => {
    sandbox = makeSandbox();
    const w = await live(sandbox, A, ['--initial-rows', '12']);
    const walBefore = fs.statSync(conv(sandbox, `${A}.db-wal`)).size;
    const { exitCode, json } = await backup(sandbox);
    expect(exitCode).toBe(0);
    expect(json.sessions).toHaveLength(1);
    expect(json.sessions[0]).toMatchObject({ id: A, status: 'snapshot', integrity: 'ok', cwd: '/work/1111' });
    expect(json.sessions[0].rows).toEqual({
      battle_mode_infos: 0,
      executor_metadata: 0,
      gen_metadata: 12,
      parent_references: 0,
      steps: 12,
      trajectory_meta: 1,
      trajectory_metadata_blob: 0,
    });
    const dir = json.snapshot.path as string;
    expect(fs.readdirSync(dir).sort()).toEqual([`${A}.db`, `${A}.meta`, 'manifest.json']);
    expect(count(path.join(dir, `${A}.db`))).toBe(w.initialRows);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      schemaVersion: 2, // 2: sessions carry their brain/<id>/ files
      kind: 'agyctl-backup',
      sourceStateDir: sandbox.stateDir,
      failed: [],
    });
    expect(manifest.host).toBeTruthy();
    expect(manifest.agyctlVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(manifest.sessions[0].source.wal.size).toBe(walBefore);
    expect(fs.statSync(conv(sandbox, `${A}.db-wal`)).size).toBe(walBefore);
  });

  it('a large database (hashed in a worker thread while integrity_check runs) matches what verify computes', async () => {
    sandbox = makeSandbox();
    await live(sandbox, A, ['--initial-mb', '40', '--blob-bytes', '30000', '--interval-ms', '20']);
    const { exitCode, json } = await backup(sandbox);
    expect(exitCode).toBe(0);
    expect(json.sessions[0].bytes).toBeGreaterThan(40 * 1024 * 1024);
    const file = path.join(json.snapshot.path, `${A}.db`);
    const sha = (await import('node:crypto')).createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    expect(json.sessions[0].sha256).toBe(sha);
    expect(json.sessions[0].rows.steps).toBe(count(file));
    expect((await agyctl(['backup', 'verify', json.snapshot.path], sandbox)).exitCode).toBe(0);
  });

  it('reuses unchanged sessions by hard link and snapshots changed ones again', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 4);
    await idle(sandbox, B, 6);
    const first = await backup(sandbox);
    expect(first.json.sessions.map((s: any) => s.status)).toEqual(['snapshot', 'snapshot']);
    const second = await backup(sandbox);
    expect(second.exitCode).toBe(0);
    const reused = Object.fromEntries(second.json.sessions.map((s: any) => [s.id, [s.status, s.reusedFrom]]));
    expect(reused).toEqual({ [A]: ['reused', first.json.snapshot.name], [B]: ['reused', first.json.snapshot.name] });
    const ino = (snap: any): number => fs.statSync(path.join(snap.json.snapshot.path, `${A}.db`)).ino;
    expect(ino(second)).toBe(ino(first));
    // B changes: a new commit.
    const w = await live(sandbox, B, ['--initial-rows', '1']);
    await w.stop();
    writers.splice(writers.indexOf(w), 1);
    const third = await backup(sandbox);
    const byId = Object.fromEntries(third.json.sessions.map((s: any) => [s.id, s]));
    expect(byId[A].status).toBe('reused');
    expect(byId[B].status).toBe('snapshot');
    expect(byId[B].rows.steps).toBe(7);
    const verify = await agyctl(['backup', 'verify', third.json.snapshot.path, '--json'], sandbox);
    expect(verify.exitCode).toBe(0);
  });

  it('verify passes a good snapshot and catches one flipped byte (exit 6)', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 20);
    const { json } = await backup(sandbox);
    const ok = await agyctl(['backup', 'verify', 'latest', '--from', backups(sandbox), '--json'], sandbox);
    expect(ok.exitCode).toBe(0);
    expect((parseJson(ok.stdout) as any).verify.sessions[0]).toMatchObject({ id: A, ok: true });
    const file = path.join(json.snapshot.path, `${A}.db`);
    const bytes = fs.readFileSync(file);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    fs.writeFileSync(file, bytes);
    const bad = await agyctl(['backup', 'verify', json.snapshot.path, '--json'], sandbox);
    expect(bad.exitCode).toBe(6);
    const doc = parseJson(bad.stdout) as any;
    expect(doc.ok).toBe(false);
    expect(doc.verify.sessions[0].ok).toBe(false);
    expect(doc.verify.sessions[0].problems.join(' ')).toMatch(/sha256/);
    const human = await agyctl(['backup', 'verify', json.snapshot.path], sandbox);
    expect(human.exitCode).toBe(6);
    expect(human.stdout).toMatch(/MISMATCH/);
  });

  it('reports a session that stays locked and backs up the rest (exit 6); retention is skipped', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, B, 3);
    await live(sandbox, A, ['--exclusive', '--initial-rows', '2']);
    const { exitCode, json, stderr } = await backup(sandbox, ['--busy-timeout', '500ms', '--keep-last', '1']);
    expect(exitCode).toBe(6);
    expect(json.ok).toBe(false);
    expect(json.failed).toEqual([{ id: A, reason: expect.stringMatching(/locked/) }]);
    expect(json.sessions.map((s: any) => s.id)).toEqual([B]);
    expect(json.retention).toMatchObject({ applied: false });
    expect(stderr).toContain(A);
    expect(snapshotDirs(sandbox)).toHaveLength(1); // the snapshot of the healthy sessions is kept
  });

  it('a second backup into the same directory exits 2 naming the holder pid', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 1);
    fs.mkdirSync(backups(sandbox), { recursive: true });
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const stat = fs.readFileSync(`/proc/${holder.pid}/stat`, 'utf8');
      const procStart = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      fs.writeFileSync(
        path.join(backups(sandbox), '.lock'),
        JSON.stringify({ pid: holder.pid, host: (await import('node:os')).hostname(), procStart, since: 'now' }),
      );
      const r = await agyctl(['backup', '--to', backups(sandbox)], sandbox);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(`pid ${holder.pid}`);
      expect(snapshotDirs(sandbox)).toEqual([]);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a SIGKILLed run leaves only a .partial directory, which the next run removes', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, B, 2);
    const locker = await live(sandbox, A, ['--exclusive', '--initial-rows', '2']); // keeps the run busy retrying
    const run = spawnAgyctl(['backup', '--to', backups(sandbox), '--busy-timeout', '30s'], sandbox);
    const deadline = Date.now() + 20_000;
    const partial = (): string[] =>
      fs.existsSync(backups(sandbox!)) ? fs.readdirSync(backups(sandbox!)).filter((n) => n.endsWith('.partial')) : [];
    while (partial().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(partial()).toHaveLength(1);
    run.kill('SIGKILL');
    await run;
    expect(snapshotDirs(sandbox)).toEqual([]);
    expect(partial()).toHaveLength(1);
    await locker.stop();
    writers.splice(writers.indexOf(locker), 1);
    const next = await backup(sandbox);
    expect(next.exitCode).toBe(0);
    expect(next.json.cleanedUp).toEqual([expect.stringMatching(/\.partial$/)]);
    expect(partial()).toEqual([]);
    expect(snapshotDirs(sandbox)).toHaveLength(1);
  });

  it('Ctrl-C (SIGINT) while a locked session is retried stops promptly: exit 130, no snapshot, no leftovers, no lock', async () => {
    sandbox = makeSandbox();
    await live(sandbox, A, ['--exclusive', '--initial-rows', '2']);
    const run = spawnAgyctl(['backup', '--to', backups(sandbox), '--busy-timeout', '60s'], sandbox);
    const deadline = Date.now() + 20_000;
    while (
      !(fs.existsSync(backups(sandbox)) && fs.readdirSync(backups(sandbox)).some((n) => n.endsWith('.partial'))) &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    run.kill('SIGINT');
    const result = await run;
    expect(result.exitCode).toBe(130);
    expect(fs.readdirSync(backups(sandbox))).toEqual([]);
    expect(String(result.stderr)).toMatch(/Interrupted: nothing partial was left/);
  });

  it('disk full (file-size limit) fails clearly, removes the unfinished snapshot and leaves earlier ones intact', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 2);
    const first = await backup(sandbox);
    expect(first.exitCode).toBe(0);
    await live(sandbox, B, ['--initial-rows', '200', '--blob-bytes', '20000']); // ~4 MB to vacuum
    // SIGXFSZ ignored so the write fails with EFBIG instead of killing the process.
    const r = await execa(
      'bash',
      ['-c', `trap '' XFSZ; ulimit -f 1024; exec "$@"`, 'bash', ...AGYCTL_ARGV, 'backup', '--to', backups(sandbox)],
      {
        env: sandbox.env,
        extendEnv: false,
        reject: false,
        timeout: 45_000,
      },
    );
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toMatch(/Could not write the snapshot.*earlier snapshots are untouched/);
    expect(r.stderr).toMatch(/hint: free space/);
    expect(fs.readdirSync(backups(sandbox)).filter((n) => n !== '.lock')).toEqual([first.json.snapshot.name]);
    expect(fs.existsSync(path.join(backups(sandbox), '.lock'))).toBe(false);
    const verify = await agyctl(['backup', 'verify', first.json.snapshot.path], sandbox);
    expect(verify.exitCode).toBe(0);
  });

  it('retention prunes only complete snapshots, after the new one is complete', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 1);
    for (let i = 0; i < 3; i += 1) expect((await backup(sandbox)).exitCode).toBe(0);
    const complete = snapshotDirs(sandbox);
    expect(complete).toHaveLength(3);
    const foreign = '2020-01-01T00-00-00.000Z'; // timestamp name, no manifest: not ours to delete
    fs.mkdirSync(path.join(backups(sandbox), foreign));
    const r = await backup(sandbox, ['--keep-last', '2']);
    expect(r.exitCode).toBe(0);
    expect(r.json.retention.applied).toBe(true);
    expect(r.json.retention.removed).toEqual([complete[1], complete[0]]);
    expect(snapshotDirs(sandbox)).toEqual([foreign, complete[2], r.json.snapshot.name]);
    // Reuse still works from the surviving snapshot (hard links keep the data alive).
    expect(r.json.sessions[0].status).toBe('reused');
    expect((await agyctl(['backup', 'verify', 'latest', '--from', backups(sandbox)], sandbox)).exitCode).toBe(0);
  });

  it('bad options are usage errors (exit 2)', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 1);
    expect((await agyctl(['backup', '--to', backups(sandbox), '--keep-last', 'x'], sandbox)).exitCode).toBe(2);
    expect((await agyctl(['backup', '--to', backups(sandbox), '--keep-last', '0'], sandbox)).exitCode).toBe(2);
    const unknown = await agyctl(['backup', '--to', backups(sandbox), '--session', B], sandbox);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain(B);
    expect(fs.existsSync(backups(sandbox))).toBe(false);
    expect((await agyctl(['backup', 'verify', path.join(sandbox.root, 'nope')], sandbox)).exitCode).toBe(2);
  });
});

describe('agyctl restore', () => {
  it('refuses while a process holds the database (exit 6), restores with --force keeping a pre-restore copy', async () => {
    sandbox = makeSandbox();
    const w = await live(sandbox, A, ['--initial-rows', '5']);
    const { json } = await backup(sandbox);
    // A step after the snapshot: the restore replaces different content, so it keeps a copy (same content keeps none).
    const db = new Database(conv(sandbox, `${A}.db`), { fileMustExist: true });
    db.prepare('INSERT INTO steps (idx, step_type, status, step_format) VALUES (1000, 99, 3, 1)').run();
    db.close();
    const before = fs.readdirSync(conv(sandbox)).sort();

    const refused = await agyctl(['restore', json.snapshot.path, '--json'], sandbox);
    expect(refused.exitCode).toBe(6);
    const doc = parseJson(refused.stdout) as any;
    expect(doc).toMatchObject({ ok: false, error: { code: 'restore-refused', exit: 6 } });
    expect(doc.openBy[conv(sandbox, `${A}.db`)]).toEqual([w.pid]);
    expect(fs.readdirSync(conv(sandbox)).sort()).toEqual(before);

    const forced = await agyctl(['restore', json.snapshot.path, '--force', '--json'], sandbox);
    expect(forced.exitCode).toBe(0);
    const restored = (parseJson(forced.stdout) as any).restore.sessions[0];
    expect(restored).toMatchObject({ id: A, restored: true });
    expect(fs.existsSync(restored.preRestore)).toBe(true);
    expect(path.basename(restored.preRestore)).toMatch(new RegExp(`^${A}\\.db\\.pre-restore-`));
    expect(count(restored.preRestore)).toBe(6);
    expect(forced.stderr).toMatch(/--force/);
  });

  it('--force never overrides a failed SQLite lock: a writer holding the database exclusively keeps it', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 4);
    const { json } = await backup(sandbox);
    const w = await live(sandbox, A, ['--exclusive', '--initial-rows', '1']);
    const r = await agyctl(['restore', json.snapshot.path, '--force', '--json'], sandbox);
    expect(r.exitCode).toBe(6);
    const s = (parseJson(r.stdout) as any).restore.sessions[0];
    expect(s).toMatchObject({ id: A, restored: false, preRestore: null });
    expect(s.reason).toMatch(/--force does not override/);
    expect(fs.readdirSync(conv(sandbox)).filter((n) => /pre-restore|\.tmp$/.test(n))).toEqual([]);
    expect(await w.stop()).toBe(5);
    writers.splice(writers.indexOf(w), 1);
  });

  it("round trip: changed and deleted conversations come back with the snapshot's rows, in WAL mode", async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 5);
    await idle(sandbox, B, 3);
    const { json } = await backup(sandbox);
    const w = await live(sandbox, A, ['--initial-rows', '10']); // A changes
    await w.stop();
    writers.splice(writers.indexOf(w), 1);
    for (const f of fs.readdirSync(conv(sandbox)).filter((n) => n.startsWith(B))) fs.rmSync(conv(sandbox, f)); // B deleted
    expect(count(conv(sandbox, `${A}.db`))).toBe(15);

    const r = await agyctl(['restore', json.snapshot.path, '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const sessions = (parseJson(r.stdout) as any).restore.sessions;
    expect(sessions.find((s: any) => s.id === B)).toMatchObject({ restored: true, preRestore: null });
    expect(fs.existsSync(conv(sandbox, `${A}.db-wal`))).toBe(false); // the old WAL is gone (checked before any reader opens it)
    expect(count(conv(sandbox, `${A}.db`))).toBe(5);
    expect(count(conv(sandbox, `${B}.db`))).toBe(3);
    expect(JSON.parse(fs.readFileSync(conv(sandbox, `${B}.meta`), 'utf8'))).toEqual({ cwd: '/work/2222' });
    const db = new Database(conv(sandbox, `${A}.db`), { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    expect(fs.readdirSync(conv(sandbox)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('restores over a corrupted database, keeping the broken file as the pre-restore copy', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 6);
    const { json } = await backup(sandbox);
    const target = conv(sandbox, `${A}.db`);
    for (const f of [`${target}-wal`, `${target}-shm`]) fs.rmSync(f, { force: true });
    fs.writeFileSync(target, 'this is not a database any more, it is long enough to have a header');
    const r = await agyctl(['restore', json.snapshot.path, '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const s = (parseJson(r.stdout) as any).restore.sessions[0];
    expect(s.restored).toBe(true);
    expect(fs.readFileSync(s.preRestore, 'utf8')).toMatch(/^this is not a database/);
    expect(count(target)).toBe(6);
  });

  it('refuses a damaged snapshot before touching anything, and unknown sessions are usage errors', async () => {
    sandbox = makeSandbox();
    await idle(sandbox, A, 5);
    const { json } = await backup(sandbox);
    const file = path.join(json.snapshot.path, `${A}.db`);
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 10]! ^= 0xff;
    fs.writeFileSync(file, bytes);
    const before = fs.readdirSync(conv(sandbox)).map((n) => [n, fs.statSync(conv(sandbox!, n)).mtimeMs]);
    const r = await agyctl(['restore', json.snapshot.path], sandbox);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toMatch(/damaged/);
    expect(fs.readdirSync(conv(sandbox)).map((n) => [n, fs.statSync(conv(sandbox!, n)).mtimeMs])).toEqual(before);
    const unknown = await agyctl(['restore', json.snapshot.path, '--session', B], sandbox);
    expect(unknown.exitCode).toBe(2);
  });
});

describe('backup verify and the options of a backup run', () => {
  it('refuses --to (with --from as the fix), --keep-last, and --to before verify, instead of verifying the default directory', async () => {
    sandbox = makeSandbox();
    const other = path.join(sandbox.root, 'elsewhere');
    for (const args of [
      ['backup', 'verify', 'latest', '--to', other],
      ['backup', '--to', other, 'verify', 'latest'],
    ]) {
      const r = await agyctl([...args, '--json'], sandbox);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect((parseJson(r.stdout) as any).error).toMatchObject({ code: 'usage', exit: 2 });
      const human = await agyctl(args, sandbox);
      expect(human.stderr).toContain('--from DIR');
    }
    const keep = await agyctl(['backup', 'verify', 'latest', '--keep-last', '3'], sandbox);
    expect(keep.exitCode).toBe(2);
    expect(keep.stderr).toContain('--keep-last is an option of a backup run');
  });
});
