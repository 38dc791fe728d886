/**
 * A snapshot is made one of two ways (docs/backup.md): the checked private
 * copy itself, its WAL checkpointed into it (`compacted: false`, the
 * default), or that copy compacted with VACUUM INTO (`compacted: true`, with
 * --compact or when its free pages pass the threshold). Everything that reads
 * snapshots works the same on both: the manifest and --json say which,
 * verify, verify --prove, restore (and its "same content" check), the
 * archive stream and restore from it, and reuse by the next run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { statePaths } from '../../../src/sim/paths.js';
import { ConversationDb } from '../../../src/sim/store.js';
import { agyctl, parseJson, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

function box(): Sandbox {
  const sb = authedSandbox();
  return sb;
}

const conv = (sb: Sandbox): string => path.join(sb.stateDir, 'conversations');

/** Quiet for an hour, so the next run may reuse it. */
function age(sb: Sandbox, id: string): void {
  const old = new Date(Date.now() - 3_600_000);
  for (const f of [`${id}.db`, `${id}.db-wal`]) {
    const p = path.join(conv(sb), f);
    if (fs.existsSync(p)) fs.utimesSync(p, old, old);
  }
}

function addTurn(sb: Sandbox, id: string): void {
  const db = ConversationDb.open(statePaths({ HOME: sb.home }), id)!;
  db.appendTurn('later', 'answer later', 'gemini-3.7-flash-high');
  db.close();
}

describe.each([
  { kind: 'copied', flags: [] as string[], compacted: false },
  { kind: 'compacted', flags: ['--compact'], compacted: true },
])('a snapshot $kind', ({ flags, compacted }) => {
  it('is recorded as such, verifies, proves, restores, streams and is reused', async () => {
    const sb = box();
    const id = addConversation(sb, 3, '/work/kinds', 400);
    age(sb, id);
    const bk = path.join(sb.root, 'bk');
    const tar = path.join(sb.root, 'snap.tar');
    const made = await agyctl(['backup', '--to', bk, '--archive', tar, '--json', ...flags], sb);
    expect(made.exitCode, made.stderr).toBe(0);
    const doc = parseJson(made.stdout) as any;
    expect(doc.sessions[0]).toMatchObject({ id, status: 'snapshot', compacted, integrity: 'ok' });
    const snap = doc.snapshot.path as string;
    const manifest = JSON.parse(fs.readFileSync(path.join(snap, 'manifest.json'), 'utf8'));
    expect(manifest.sessions[0]).toMatchObject({ id, compacted });
    // Rollback-journal mode, as snapshots always were: nothing beside it, header bytes 18-19 = 1.
    const head = fs.readFileSync(path.join(snap, `${id}.db`)).subarray(18, 20);
    expect([...head]).toEqual([1, 1]);
    expect(fs.readdirSync(snap).sort()).toEqual([`${id}.db`, `${id}.meta`, 'manifest.json'].sort());

    const verify = await agyctl(['backup', 'verify', snap, '--prove', '--json'], sb);
    expect(verify.exitCode, verify.stdout + verify.stderr).toBe(0);
    expect((parseJson(verify.stdout) as any).ok).toBe(true);

    const again = await agyctl(['backup', '--to', bk, '--json'], sb);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((parseJson(again.stdout) as any).sessions[0]).toMatchObject({ id, status: 'reused', compacted });

    const same = await agyctl(['restore', snap, '--dry-run', '--json'], sb);
    expect((parseJson(same.stdout) as any).restorePlan.sessions[0]).toMatchObject({ id, sameContent: true });
    addTurn(sb, id);
    const dry = await agyctl(['restore', snap, '--dry-run', '--json'], sb);
    expect((parseJson(dry.stdout) as any).restorePlan.sessions[0]).toMatchObject({ id, sameContent: false });
    const restored = await agyctl(['restore', snap, '--prove', '--json'], sb);
    expect(restored.exitCode, restored.stdout + restored.stderr).toBe(0);
    const r = parseJson(restored.stdout) as any;
    expect(r.restore.sessions[0]).toMatchObject({ id, restored: true, unchanged: false });
    expect(r.prove.sessions[0]).toMatchObject({ id, ok: true, loaded: true, replayed: { user: 3, agent: 3 } });
    const twice = await agyctl(['restore', snap, '--json'], sb);
    expect((parseJson(twice.stdout) as any).restore.sessions[0]).toMatchObject({ id, unchanged: true });

    const other = box();
    const fromTar = await agyctl(['restore', '--archive', tar, '--prove', '--json', '--from-other-source'], other);
    expect(fromTar.exitCode, fromTar.stdout + fromTar.stderr).toBe(0);
    expect((parseJson(fromTar.stdout) as any).prove.sessions[0]).toMatchObject({ id, ok: true, loaded: true });
  }, 120_000);
});
