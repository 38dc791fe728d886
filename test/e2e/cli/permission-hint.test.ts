/**
 * A path this user cannot reach is a permission error whose fix names the
 * directory that blocks the way (a 0700 directory of root's, as /root is to
 * a user after `sudo -s`), not the deepest path, which the user could not
 * `ls -ld` anyway; a directory it may not read is named itself, and one it
 * may not create names the directory it was to be made in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { agyctlArgv, makeSandbox, parseJson } from '../../helpers/cli.js';
import { createUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';

describe('a permission error names what blocks the way', () => {
  it('a directory the user cannot enter, one it cannot read, one it cannot write in', async () => {
    requireRoot('these tests');
    await useReadableApp();
    const sb = makeSandbox();
    fs.chmodSync(sb.root, 0o755);
    const user = createUser(sb.home);
    try {
      const hidden = path.join(sb.root, 'hidden'); // root's, 0700: the user cannot enter it
      fs.mkdirSync(path.join(hidden, 'deep', 'er'), { recursive: true, mode: 0o700 });
      fs.chmodSync(hidden, 0o700);
      const closed = path.join(sb.root, 'closed'); // root's, 0755: the user can enter, not write
      fs.mkdirSync(closed, { mode: 0o755 });
      const secret = path.join(closed, 'snapshot');
      fs.mkdirSync(secret, { mode: 0o700 });
      const home = path.join(sb.root, 'u');
      fs.mkdirSync(home);
      fs.mkdirSync(path.join(home, '.gemini', 'antigravity-acp', 'conversations'), { recursive: true });
      for (const dir of ['', '.gemini', '.gemini/antigravity-acp', '.gemini/antigravity-acp/conversations'])
        fs.chownSync(path.join(home, dir), user.uid, user.gid);
      const cases: Array<[string, string[], string]> = [
        [
          'restore from a snapshot under it',
          ['restore', path.join(hidden, 'deep', 'er', 'latest'), '--dry-run'],
          hidden,
        ],
        ['backup --to under it', ['backup', '--to', path.join(hidden, 'deep', 'er', 'bk')], hidden],
        ['sessions --state-dir under it', ['sessions', '--state-dir', path.join(hidden, 'deep', 'er')], hidden],
        ['backup --to a new directory in one it cannot write', ['backup', '--to', path.join(closed, 'bk')], closed],
        ['restore from a snapshot it cannot read', ['restore', secret, '--dry-run'], secret],
      ];
      for (const [what, args, blocker] of cases) {
        const r = await execa(agyctlArgv()[0]!, [...agyctlArgv().slice(1), ...args, '--json'], {
          env: { PATH: process.env.PATH!, HOME: home, NO_COLOR: '1', LANG: 'C.UTF-8' },
          extendEnv: false,
          uid: user.uid,
          gid: user.gid,
          cwd: home,
          reject: false,
          timeout: 30_000,
        });
        expect(r.exitCode, `${what}: ${r.stderr}`).toBe(2);
        const err = (parseJson(String(r.stdout)) as { error: { code: string; hint: string } }).error;
        expect(err.code, what).toBe('fs-permission-denied');
        expect(err.hint, what).toContain(`fix the owner or mode of ${blocker} (ls -ld it)`);
      }
    } finally {
      user.remove();
    }
  });
});
