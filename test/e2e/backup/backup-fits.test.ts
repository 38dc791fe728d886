/**
 * A backup that fits, works: on a destination with room for the snapshot
 * but not for a second copy of the session, the run succeeds. (When the
 * private copy and a VACUUM INTO of it were on disk at once, this failed
 * with SQLITE_FULL.) The destination is a tmpfs just large enough.
 *
 * @module-tag root
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, parseJson, type Sandbox } from '../../helpers/cli.js';
import { requireRoot } from '../../helpers/os-user.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

requireRoot('the small-destination backup test (it mounts a tmpfs)');

let sb: Sandbox | undefined;
let mounted: string | undefined;
afterEach(() => {
  if (mounted) execFileSync('umount', [mounted]);
  mounted = undefined;
  sb = undefined;
});

describe('backup onto a destination just large enough', () => {
  it('writes the snapshot when there is room for it but not for a second copy of the session', async () => {
    sb = authedSandbox();
    const id = addConversation(sb, 2, '/work/fits', 16 * 1024);
    const db = path.join(sb.stateDir, 'conversations', `${id}.db`);
    expect(fs.existsSync(`${db}-wal`)).toBe(false); // closed and checkpointed: the snapshot is about the db's size
    const bytes = fs.statSync(db).size;
    // Room for the snapshot and its small files, a quarter to spare; two copies of the session do not fit.
    const room = Math.ceil((bytes * 1.25 + 1024 * 1024) / 4096) * 4096;
    expect(2 * bytes).toBeGreaterThan(room);
    mounted = path.join(sb.root, 'small');
    fs.mkdirSync(mounted);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${room},mode=0700`, 'tmpfs', mounted]);
    const bk = path.join(mounted, 'bk');

    const r = await agyctl(['backup', '--to', bk, '--json'], sb);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const doc = parseJson(r.stdout) as any;
    expect(doc.sessions[0]).toMatchObject({ id, status: 'snapshot', integrity: 'ok', compacted: false });
    const verify = await agyctl(['backup', 'verify', doc.snapshot.path, '--json'], sb);
    expect(verify.exitCode, verify.stdout).toBe(0);
    expect(fs.readdirSync(bk).filter((n) => n.endsWith('.partial'))).toEqual([]);
  }, 120_000);
});
