/**
 * Whose tree a state dir is in, decided before root does anything there.
 * Root never works inside a user's tree as root: the work runs in a child
 * that has become that user (src/cli/as-owner.ts), so the kernel, not
 * agyctl's path checks, decides what can be touched (docs/security.md).
 *
 * The owner is the first non-root owner on the way from `/` to the state
 * dir (the home it is in); every later directory on the way, and the state
 * dir itself when it exists, must be root's or that user's. Where that
 * cannot be decided safely agyctl refuses (exit 2) and names the fix: a
 * directory on the way that someone else can write and that is not sticky
 * (they could swap what follows it), a link another user owns, a state dir
 * of one user (or root) inside another user's home.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT } from '../../core/errors.js';

/** The account root becomes for the work in a user's tree. */
export interface TreeOwner {
  uid: number;
  gid: number;
  name: string;
  home: string;
  /** The account's login shell (SHELL in its environment). */
  shell: string;
}

const refuse = (message: string, hint: string, dir: string): AgyError =>
  new AgyError(EXIT.usage, 'state-dir-owner-unclear', `${message} Nothing was changed.`, {
    hint,
    details: { path: dir },
  });

const STICKY = 0o1000;

/** Written by others and not sticky: they can rename what is in it. */
const othersCanSwap = (st: fs.Stats): boolean => (st.mode & 0o022) !== 0 && (st.mode & STICKY) === 0;

/** A link's target, or null when `file` is no longer a link or is gone (it changed since it was looked at). */
export function linkTargetNow(file: string): string | null {
  try {
    return fs.readlinkSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EINVAL' || code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * The uid whose tree `stateDir` is in: undefined when every directory on the
 * way is root's (root's own state dir). Throws `state-dir-owner-unclear`
 * (exit 2) where that cannot be decided safely.
 */
export function treeOwnerUid(stateDir: string): number | undefined {
  const shown = path.resolve(stateDir);
  let parts = shown.split(path.sep).filter(Boolean);
  let at = '/';
  let owner: number | undefined;
  let deepest = fs.lstatSync('/');
  let reached = true;
  for (let hops = 0; parts.length > 0; ) {
    if (othersCanSwap(deepest))
      throw refuse(
        `${at} (on the way to the state dir ${shown}) can be written by users other than its owner and is not sticky: one of them could swap what follows it, so agyctl cannot tell whose state dir this is.`,
        `chmod go-w ${at} (or chmod +t ${at}), or run agyctl as the user who owns the state dir`,
        shown,
      );
    const name = parts.shift()!;
    const next = path.join(at, name);
    const st = fs.lstatSync(next, { throwIfNoEntry: false });
    if (!st) {
      reached = false; // not yet created: decided by the directories above it
      break;
    }
    if (st.uid !== 0) {
      owner ??= st.uid;
      if (st.uid !== owner)
        throw refuse(
          `${next} belongs to uid ${st.uid}, but it is inside a directory of uid ${owner} (on the way to the state dir ${shown}): agyctl cannot tell whose state dir this is.`,
          `give the state dir and the directories above it inside the home to one user (chown -R USER: ${next}), or run agyctl as that user`,
          shown,
        );
    }
    if (st.isSymbolicLink()) {
      if (++hops > 40)
        throw refuse(`Too many symbolic links on the way to ${shown}.`, `fix the links in ${shown}`, shown);
      const target = linkTargetNow(next);
      if (target === null) {
        parts.unshift(name); // no longer a link (the owner swapped it back): looked at again, as one more hop
        continue;
      }
      parts = [...target.split(path.sep).filter(Boolean), ...parts];
      if (path.isAbsolute(target)) {
        at = '/';
        deepest = fs.lstatSync('/');
      }
      continue;
    }
    if (!st.isDirectory()) {
      reached = false; // the command reports a state dir that is no directory
      break;
    }
    at = next;
    deepest = st;
  }
  if (owner !== undefined && deepest.uid === 0 && reached)
    throw refuse(
      `The state dir ${shown} belongs to root but is inside the home of uid ${owner}, who can rename it away and put anything in its place.`,
      `chown -R ${owner}: ${shown} (it is that user's state dir), or use a state dir outside that home`,
      shown,
    );
  return owner;
}

/** The account of `uid` (name, primary group, home), from the system's user database (getent). */
export function accountOf(uid: number, stateDir: string): TreeOwner {
  let line = '';
  try {
    line = execFileSync('getent', ['passwd', String(uid)], { encoding: 'utf8', timeout: 10_000 }).split('\n')[0] ?? '';
  } catch {
    /* no such account: refused below */
  }
  const f = line.split(':');
  const gid = Number(f[3]);
  if (f.length < 7 || Number(f[2]) !== uid || !Number.isInteger(gid) || !f[0])
    throw refuse(
      `The state dir ${path.resolve(stateDir)} belongs to uid ${uid}, which has no account on this system (getent passwd ${uid} finds none), so root cannot act in it as its owner.`,
      `chown -R USER: ${path.resolve(stateDir)} to give it to an existing user, or run agyctl as its owner`,
      stateDir,
    );
  return { uid, gid, name: f[0], home: f[5] || '/', shell: f[6] || '/bin/sh' };
}

/**
 * Whom root must become to work in `stateDir`: undefined when agyctl is not
 * root, or the state dir is root's (work as today).
 */
export function ownerToBecome(stateDir: string): TreeOwner | undefined {
  if (process.geteuid?.() !== 0) return undefined;
  const uid = treeOwnerUid(stateDir);
  return uid === undefined ? undefined : accountOf(uid, stateDir);
}

/** The variable a parent sets for its child to become `owner` first thing (see dropToOwner). */
export const AS_OWNER_VAR = 'AGYCTL_AS_OWNER';
/** The child's --trace lines go to this descriptor (a pipe root copies into root's trace file). */
export const TRACE_FD_VAR = 'AGYCTL_TRACE_FD';
/** The child's --prometheus text goes to this descriptor (a pipe; root writes the file). */
export const METRICS_FD_VAR = 'AGYCTL_METRICS_FD';

/** The child's archive goes to this descriptor (a pipe root reads into root's backup dir). */
export const ARCHIVE_FD_VAR = 'AGYCTL_ARCHIVE_FD';
/** What the child's `restore --archive -` names as its source: the snapshot or file root streams to it. */
export const ARCHIVE_SHOWN_VAR = 'AGYCTL_ARCHIVE_SHOWN';

/** Root's working directory, for the child's relative paths only: the child itself runs in the owner's home. */
export const CALLER_CWD_VAR = 'AGYCTL_CALLER_CWD';
/** The node flag root's child was started with through NODE_OPTIONS (the executable), taken out before it starts anything. */
export const OWNER_NODE_OPTIONS = '--disable-sigusr1';

/** The descriptor a relay variable names, if set. */
export function relayFd(
  env: NodeJS.ProcessEnv,
  name: typeof TRACE_FD_VAR | typeof METRICS_FD_VAR | typeof ARCHIVE_FD_VAR,
): number | undefined {
  const fd = Number(env[name]);
  return env[name] !== undefined && Number.isInteger(fd) && fd > 2 ? fd : undefined;
}

/**
 * In the child, before any other work: become the account in AS_OWNER_VAR
 * (its supplementary groups, then its group, then its uid, as su does), and
 * check that there is no way back to root. libuv's spawn uid/gid would leave
 * the supplementary groups empty, hence the drop here.
 */
export function dropToOwner(env: NodeJS.ProcessEnv): boolean {
  const spec = env[AS_OWNER_VAR];
  if (spec === undefined) return false;
  delete env[AS_OWNER_VAR];
  // Node opens its inspector on SIGUSR1 unless a listener holds the signal; once this process is the
  // owner's, the owner may send it. The listener is set before the drop and kept for the whole run.
  process.on('SIGUSR1', () => undefined);
  if (env.NODE_OPTIONS === OWNER_NODE_OPTIONS) delete env.NODE_OPTIONS; // not for the servers it starts
  const [uidText, gidText, ...nameParts] = spec.split(':');
  const uid = Number(uidText);
  const gid = Number(gidText);
  const name = nameParts.join(':');
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid <= 0 || !name)
    throw new Error(`${AS_OWNER_VAR} is malformed: ${JSON.stringify(spec)}`);
  if (process.geteuid?.() === 0) {
    (process as unknown as { initgroups(user: string, extraGroup: number): void }).initgroups(name, gid);
    process.setgid!(gid);
    process.setuid!(uid);
  }
  if (process.getuid?.() !== uid || process.geteuid?.() !== uid || process.getegid?.() !== gid)
    throw new Error(`could not become uid ${uid} gid ${gid}`);
  let regained = false;
  try {
    process.setuid!(0);
    regained = true;
  } catch {
    /* expected: no way back */
  }
  if (regained) throw new Error('dropped privileges could be regained');
  return true;
}

/**
 * The first directory on the way to `target` (itself included when it is
 * one) that this process may not enter: what a permission error is about
 * when the path is fine but a directory above it is closed (root's 0700
 * /root seen by the owner's child). Undefined when every one can be entered.
 */
export function firstClosedDir(target: string): string | undefined {
  let at = '/';
  for (const part of ['', ...path.resolve(target).split(path.sep).filter(Boolean)]) {
    at = path.join(at, part);
    const st = fs.statSync(at, { throwIfNoEntry: false });
    if (!st?.isDirectory()) return undefined;
    try {
      fs.accessSync(at, fs.constants.X_OK);
    } catch {
      return at;
    }
  }
  return undefined;
}

/** The working directory for a process this one starts: `cwd` when it can be entered, else this process's own. */
export function enterableCwd(cwd: string): string {
  try {
    fs.accessSync(cwd, fs.constants.X_OK);
    return cwd;
  } catch {
    return process.cwd();
  }
}
