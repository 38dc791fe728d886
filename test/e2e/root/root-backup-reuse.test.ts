/**
 * Root backing up a user's state dir reuses unchanged sessions as the
 * owner's own backups do (docs/backup.md, "Unchanged sessions are reused"):
 * the owner's side is told what root's previous snapshot recorded, leaves
 * the databases it finds unchanged out of the stream, and root links its own
 * files after checking them. A previous file of root's that no longer
 * matches its record makes root copy everything again.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox } from '../../helpers/cli.js';
import { createUser, type OsUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';
import { makeTaggedDb, tagsOf } from '../../helpers/tagged-db.js';

beforeAll(useReadableApp);
requireRoot("the tests of root's reuse on a user's state dir");

const IDS = [
  '61111111-1111-4111-8111-111111111111',
  '62222222-2222-4222-8222-222222222222',
  '63333333-3333-4333-8333-333333333333',
];

interface Box extends Sandbox {
  user: OsUser;
  conv: string;
  backups: string;
}

let box: Box | undefined;
afterEach(() => {
  box?.user.remove();
  box = undefined;
});

function userBox(): Box {
  const sb = makeSandbox();
  fs.chmodSync(sb.root, 0o755);
  const user = createUser(sb.home);
  const conv = path.join(sb.stateDir, 'conversations');
  fs.mkdirSync(conv, { recursive: true, mode: 0o700 });
  for (const d of [sb.home, path.dirname(sb.stateDir), sb.stateDir, conv]) fs.chownSync(d, user.uid, user.gid);
  box = Object.assign(sb, { user, conv, backups: path.join(sb.root, 'root-backups') });
  return box;
}

/** A session of `rows` 2 KB rows tagged `tag`, quiet for an hour (reusable by the next run). */
function session(b: Box, id: string, tag: string, rows = 200): void {
  const file = path.join(b.conv, `${id}.db`);
  makeTaggedDb(file, `${tag}-${'x'.repeat(2000)}`, rows, b.user);
  const old = new Date(Date.now() - 3_600_000);
  fs.utimesSync(file, old, old);
}

let lastStderr = '';
async function rootBackup(b: Box, extra: string[] = []): Promise<any> {
  const r = await agyctl(['backup', '--to', b.backups, '--json', ...extra], b, { timeoutMs: 60_000 });
  expect(r.exitCode, r.stdout + r.stderr).toBe(0);
  lastStderr = r.stderr;
  return parseJson(r.stdout);
}

const inode = (file: string): number => fs.statSync(file).ino;

describe("root's backups of a user's state dir", () => {
  it('reuse unchanged sessions: only changed databases cross the stream, and root links its own files', async () => {
    const b = userBox();
    for (const id of IDS) session(b, id, id.slice(0, 2));
    const first = await rootBackup(b);
    expect(first.sessions.map((s: any) => s.status)).toEqual(['snapshot', 'snapshot', 'snapshot']);
    const one = fs.statSync(path.join(first.snapshot.path, `${IDS[0]}.db`)).size;

    // Less than two databases' worth may cross: only one changed session fits under the cap.
    session(b, IDS[1]!, 'changed', 220);
    fs.utimesSync(path.join(b.conv, `${IDS[1]}.db`), new Date(), new Date());
    const cap = String(Math.floor(one * 1.6));
    const second = await rootBackup(b, ['--max-bytes', cap]);
    const byId = (doc: any): Record<string, any> => Object.fromEntries(doc.sessions.map((s: any) => [s.id, s]));
    expect(second.sessions.map((s: any) => [s.id, s.status]).sort()).toEqual([
      [IDS[0], 'reused'],
      [IDS[1], 'snapshot'],
      [IDS[2], 'reused'],
    ]);
    expect(byId(second)[IDS[0]!]).toMatchObject({
      reusedFrom: first.snapshot.name,
      sha256: byId(first)[IDS[0]!].sha256,
    });
    for (const id of [IDS[0]!, IDS[2]!])
      expect(inode(path.join(second.snapshot.path, `${id}.db`))).toBe(
        inode(path.join(first.snapshot.path, `${id}.db`)),
      );
    expect(tagsOf(path.join(second.snapshot.path, `${IDS[1]}.db`))[0]).toMatch(/^changed-/);
    const verify = await agyctl(['backup', 'verify', second.snapshot.path, '--json'], b);
    expect(verify.exitCode, verify.stdout).toBe(0);
  }, 120_000);

  it("copy everything again when root's previous file no longer matches its record", async () => {
    const b = userBox();
    for (const id of IDS) session(b, id, id.slice(0, 2));
    const first = await rootBackup(b);
    const victim = path.join(first.snapshot.path, `${IDS[2]}.db`);
    const bytes = fs.readFileSync(victim);
    bytes[bytes.length - 1] ^= 0xff; // same size, another hash
    fs.writeFileSync(victim, bytes);

    const second = await rootBackup(b);
    expect(lastStderr).toMatch(/does not match; copying all again/);
    expect(second.sessions.map((s: any) => s.status)).toEqual(['snapshot', 'snapshot', 'snapshot']);
    const hashes = (doc: any): string[] => doc.sessions.map((s: any) => s.sha256).sort();
    expect(hashes(second)).toEqual(hashes(first));
    const verify = await agyctl(['backup', 'verify', second.snapshot.path, '--json'], b);
    expect(verify.exitCode, verify.stdout).toBe(0);
  }, 120_000);
});
