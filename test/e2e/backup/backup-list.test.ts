/** `agyctl backup list`: the snapshots of a backup directory, newest first, for people and as JSON. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, parseJson, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

let sandbox: Sandbox | undefined;

describe('backup list', () => {
  it('lists complete snapshots newest first with sessions and size; nothing else in the directory', async () => {
    sandbox = authedSandbox();
    const sb = sandbox;
    const empty = await agyctl(['backup', 'list'], sb);
    expect(empty.exitCode, empty.stderr).toBe(0);
    expect(empty.stdout).toMatch(/no snapshots in .*backups/);

    addConversation(sb, 2);
    const first = parseJson((await agyctl(['backup', '--json'], sb)).stdout) as any;
    addConversation(sb, 1);
    const second = parseJson((await agyctl(['backup', '--json'], sb)).stdout) as any;
    const backups = path.dirname(second.snapshot.path);
    fs.mkdirSync(path.join(backups, '2026-12-02T00-00-00.000Z')); // no manifest: not a snapshot

    const human = await agyctl(['backup', 'list'], sb);
    expect(human.exitCode, human.stderr).toBe(0);
    const rows = human.stdout.split('\n').filter((l) => /^\d{4}-/.test(l));
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual([
      path.basename(second.snapshot.path),
      path.basename(first.snapshot.path),
    ]);
    expect(rows[0]).toMatch(/\s2\s+\d+(\.\d)? [KM]?B/);

    const json = await agyctl(['backup', 'list', '--from', backups, '--json'], sb);
    expect(json.exitCode).toBe(0);
    const doc = parseJson(json.stdout) as any;
    expect(doc).toMatchObject({ ok: true, backupDir: backups });
    expect(doc.snapshots).toHaveLength(2);
    expect(doc.snapshots[0]).toMatchObject({
      name: path.basename(second.snapshot.path),
      path: second.snapshot.path,
      sessions: 2,
      failed: 0,
      proven: false,
      problem: null,
      problemKind: null,
    });
    expect(doc.snapshots[0].bytes).toBeGreaterThan(0);
    expect(doc.snapshots[1].sessions).toBe(1);
  });
});
