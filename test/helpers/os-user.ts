/**
 * An unprivileged user (and a supplementary group of its own) created for a
 * test run with useradd/groupadd, under a name unique to the run, removed
 * afterwards, also when the run fails (an 'exit' hook). Needs root, as CI.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { useReadableApp } from './readable-app.js';

export interface OsUser {
  name: string;
  uid: number;
  gid: number;
  /** A supplementary group the user is in (a drop that loses its groups loses this one). */
  extraGroup: { name: string; gid: number };
  remove(): void;
}

const created = new Set<OsUser>();
process.on('exit', () => {
  for (const u of created) u.remove();
});

const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });

/** Pids of the processes running as `uid` (all started by the test: the user is new). */
function pidsOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = fs.readFileSync(`/proc/${name}/status`, 'utf8');
      if (new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status)) pids.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return pids;
}

/** Throws, naming root, when the tests do not run as root: they create a user, and race root's runs. */
export function requireRoot(what: string): void {
  if (process.getuid?.() !== 0)
    throw new Error(`${what} need root (as CI runs them): they create a user with useradd and race root's agyctl runs`);
}

/** A new user with `home` as its home directory in the user database (not created here). */
export function createUser(home: string): OsUser {
  const tag = `${process.pid.toString(36)}${crypto.randomBytes(3).toString('hex')}`;
  const name = `agyu${tag}`;
  const group = `agyg${tag}`;
  run('groupadd', [group]);
  try {
    run('useradd', ['--no-create-home', '--home-dir', home, '--shell', '/usr/sbin/nologin', '--groups', group, name]);
  } catch (err) {
    run('groupdel', [group]);
    throw err;
  }
  const [uid, gid] = [run('id', ['-u', name]), run('id', ['-g', name])].map((s) => Number(s.trim())) as [
    number,
    number,
  ];
  const extraGid = Number(run('getent', ['group', group]).split(':')[2]);
  const user: OsUser = {
    name,
    uid,
    gid,
    extraGroup: { name: group, gid: extraGid },
    remove() {
      if (!created.delete(user)) return;
      for (const pid of pidsOf(uid)) {
        try {
          process.kill(pid, 'SIGKILL'); // the test's own processes: nothing else runs as this fresh user
        } catch {
          /* gone */
        }
      }
      for (const [cmd, args] of [
        ['userdel', [name]],
        ['groupdel', [group]],
      ] as const) {
        try {
          execFileSync(cmd, [...args], { stdio: 'ignore', timeout: 30_000 });
        } catch {
          /* already gone */
        }
      }
    },
  };
  created.add(user);
  return user;
}

/**
 * For a test file whose state dirs all belong to one created user: needs root,
 * creates the user (removed after the file), and runs agyctl from where that
 * user can read it, since agyctl runs itself again as them.
 */
export function stateDirOwnerForFile(what: string): OsUser {
  requireRoot(what);
  const user = createUser('/nonexistent');
  afterAll(() => user.remove());
  beforeAll(useReadableApp);
  return user;
}
