/**
 * restore's own leftovers: the `<id>.db.pre-restore-<stamp>` safety copies.
 * agyctl recognises them (no "this server build names its files
 * differently" warning from sessions, backup or check), skips the copy when
 * the database already holds the snapshot's content, keeps at most three per
 * conversation, and `restore --dry-run` says "same content" instead of
 * showing a shrinking size.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { statePaths } from '../../../src/sim/paths.js';
import { ConversationDb } from '../../../src/sim/store.js';
import { agyctl, parseJson, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox, dirState } from '../../helpers/sim-conversations.js';

const conv = (sb: Sandbox): string => path.join(sb.stateDir, 'conversations');
const copiesOf = (sb: Sandbox, id: string): string[] =>
  fs.readdirSync(conv(sb)).filter((n) => n.startsWith(`${id}.db.pre-restore-`));

async function backup(sb: Sandbox): Promise<string> {
  const r = await agyctl(['backup', '--to', path.join(sb.root, 'bk'), '--json'], sb);
  expect(r.exitCode, r.stderr).toBe(0);
  return (parseJson(r.stdout) as any).snapshot.path as string;
}

/** One more turn in the conversation, so the state dir's copy differs from any snapshot taken before. */
function addTurn(sb: Sandbox, id: string, n: number): void {
  const db = ConversationDb.open(statePaths({ HOME: sb.home }), id)!;
  db.appendTurn(`later ${n}`, `answer ${n}`, 'gemini-3.7-flash-high');
  db.close();
}

describe('pre-restore copies', () => {
  it('a restore of the same content keeps no copy; dry run says "same content"; changed content keeps one', async () => {
    const sb = authedSandbox();
    const id = addConversation(sb, 2);
    const snap = await backup(sb);

    const before = dirState(conv(sb));
    const dry = await agyctl(['restore', snap, '--dry-run'], sb);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`same {4}${id}  same content as the snapshot`));
    expect(dry.stdout).not.toMatch(/now -> /);
    expect(dry.stdout).toMatch(/would change no conversation; 1 holds the same content already:/);
    const dryJson = await agyctl(['restore', snap, '--dry-run', '--json'], sb);
    expect((parseJson(dryJson.stdout) as any).restorePlan.sessions[0]).toMatchObject({ id, sameContent: true });
    expect(dirState(conv(sb))).toEqual(before);

    const same = await agyctl(['restore', snap, '--json'], sb);
    expect(same.exitCode, same.stderr).toBe(0);
    expect((parseJson(same.stdout) as any).restore.sessions[0]).toMatchObject({
      id,
      preRestore: null,
      unchanged: true,
    });
    expect(copiesOf(sb, id)).toEqual([]);

    addTurn(sb, id, 1);
    const changed = await agyctl(['restore', snap, '--dry-run', '--json'], sb);
    expect((parseJson(changed.stdout) as any).restorePlan.sessions[0]).toMatchObject({ sameContent: false });
    const mixed = await agyctl(['restore', snap, '--dry-run'], sb);
    expect(mixed.stdout).toMatch(/would replace 1 and add 0 conversation\(s\):/);
    const r = await agyctl(['restore', snap, '--json'], sb);
    expect((parseJson(r.stdout) as any).restore.sessions[0]).toMatchObject({ unchanged: false });
    expect(copiesOf(sb, id)).toHaveLength(1);
  });

  it('keeps at most three copies per conversation, and nothing warns about them', async () => {
    const sb = authedSandbox();
    const id = addConversation(sb, 1);
    const other = addConversation(sb, 1);
    const snap = await backup(sb);
    for (let i = 0; i < 5; i += 1) {
      addTurn(sb, id, i);
      const r = await agyctl(['restore', snap, '--session', id], sb);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const copies = copiesOf(sb, id).sort();
    expect(copies).toHaveLength(3);
    expect(copiesOf(sb, other)).toEqual([]);

    for (const args of [['sessions'], ['check'], ['backup', '--to', path.join(sb.root, 'bk2')]]) {
      const r = await agyctl(args, sb);
      expect(r.stdout + r.stderr, args.join(' ')).not.toMatch(/names its files differently|not named like/);
    }
    // A file agyctl did not make is still named, whole.
    const odd = `${id}.db.something-a-newer-server-build-writes-with-a-long-name`;
    fs.writeFileSync(path.join(conv(sb), odd), '');
    const s = await agyctl(['check'], sb);
    expect(s.stderr + s.stdout).toContain(odd);
  });
});
