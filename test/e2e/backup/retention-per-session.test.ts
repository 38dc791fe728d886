/**
 * Retention is per session. `backup --session A --keep-last 1`
 * never removes the only snapshot holding B, and snapshots of an empty
 * conversations/ never push out snapshots with data. `--dry-run` shows what
 * a run would remove and writes nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox } from '../../helpers/cli.js';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

let sandbox: Sandbox | undefined;

const backups = (sb: Sandbox): string => path.join(sb.root, 'backups');
const conversations = (sb: Sandbox): string => path.join(sb.stateDir, 'conversations');

function conversation(sb: Sandbox, id: string): void {
  fs.mkdirSync(conversations(sb), { recursive: true });
  const db = new Database(path.join(conversations(sb), `${id}.db`));
  db.exec('CREATE TABLE steps (n INTEGER); INSERT INTO steps VALUES (1);');
  db.close();
  fs.writeFileSync(path.join(conversations(sb), `${id}.meta`), JSON.stringify({ cwd: `/work/${id.slice(0, 4)}` }));
}

async function backup(sb: Sandbox, extra: string[] = []): Promise<any> {
  const r = await agyctl(['backup', '--to', backups(sb), '--json', ...extra], sb);
  expect(r.exitCode, r.stderr).toBe(0);
  return parseJson(r.stdout);
}

/** Snapshot name -> the session ids its manifest lists. */
function holdings(sb: Sandbox): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const name of fs
    .readdirSync(backups(sb))
    .filter((n) => !n.startsWith('.'))
    .sort()) {
    const m = JSON.parse(fs.readFileSync(path.join(backups(sb), name, 'manifest.json'), 'utf8')) as {
      sessions: Array<{ id: string }>;
    };
    out[name] = m.sessions.map((s) => s.id).sort();
  }
  return out;
}

const holders = (h: Record<string, string[]>, id: string): string[] => Object.keys(h).filter((n) => h[n]!.includes(id));

describe('retention per session', () => {
  it('backup, then backup --session A --keep-last 1: the only snapshot holding B stays', async () => {
    sandbox = makeSandbox();
    conversation(sandbox, A);
    conversation(sandbox, B);
    const both = await backup(sandbox);
    const onlyA = await backup(sandbox, ['--session', A, '--keep-last', '1']);
    expect(onlyA.retention.removed).toEqual([]);
    const h = holdings(sandbox);
    expect(holders(h, B)).toEqual([both.snapshot.name]);
    expect(holders(h, A)).toContain(onlyA.snapshot.name);
    // A third A-only run: the older A-only snapshot goes, the one holding B still stays.
    const again = await backup(sandbox, ['--session', A, '--keep-last', '1']);
    expect(again.retention.removed).toEqual([onlyA.snapshot.name]);
    expect(holders(holdings(sandbox), B)).toEqual([both.snapshot.name]);
  });

  it('backing up an empty conversations/ twice with --keep-last 2 keeps the snapshots with data', async () => {
    sandbox = makeSandbox();
    conversation(sandbox, A);
    const first = await backup(sandbox);
    const second = await backup(sandbox);
    for (const f of fs.readdirSync(conversations(sandbox))) fs.rmSync(path.join(conversations(sandbox), f));
    await backup(sandbox, ['--keep-last', '2']);
    const last = await backup(sandbox, ['--keep-last', '2']);
    expect(last.retention.removed).toEqual([]);
    expect(holders(holdings(sandbox), A)).toEqual([first.snapshot.name, second.snapshot.name]);
    // A third empty run pushes out the oldest empty one, never data.
    const third = await backup(sandbox, ['--keep-last', '2']);
    expect(third.retention.removed).toHaveLength(1);
    expect(holders(holdings(sandbox), A)).toEqual([first.snapshot.name, second.snapshot.name]);
  });
});

describe('backup --dry-run', () => {
  it('lists what retention would remove, in --json and for people, and writes nothing', async () => {
    sandbox = makeSandbox();
    conversation(sandbox, A);
    const first = await backup(sandbox);
    const second = await backup(sandbox);
    const before = fs.readdirSync(backups(sandbox)).sort();
    const r = await agyctl(['backup', '--to', backups(sandbox), '--json', '--dry-run', '--keep-last', '1'], sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = parseJson(r.stdout) as any;
    expect(doc).toMatchObject({
      ok: true,
      dryRun: true,
      sessions: [A],
      retention: { applied: false, dryRun: true, removed: [] },
    });
    expect(doc.retention.wouldRemove.sort()).toEqual([first.snapshot.name, second.snapshot.name].sort());
    const human = await agyctl(['backup', '--to', backups(sandbox), '--dry-run', '--keep-last', '2'], sandbox);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain('dry run');
    expect(human.stdout).toContain(`would remove 1 (${first.snapshot.name})`);
    expect(fs.readdirSync(backups(sandbox)).sort()).toEqual(before);
  });
});
