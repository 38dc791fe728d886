/**
 * The installed versions of one server under a prefix (layout in
 * src/profiles/installed-server.ts): the lock every `server` command takes,
 * the sweep of a killed install's staging directory, the atomic switch of
 * `current` (a new symlink renamed over the old one), the listing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { showUntrusted } from '../core/safe-path.js';
import {
  CURRENT_LINK,
  currentVersion,
  type InstalledMeta,
  metaFile,
  readMeta,
  VERSION_NAME,
} from '../profiles/installed-server.js';
import { fsyncDir } from '../util/os/atomic-write.js';
import { holderLine, parseHolderLine, takePidLock } from '../util/os/pid-lock.js';
import { sameProcessAlive } from '../util/os/process.js';
import { mkdirsSayingWhy } from '../util/os/safe-fs.js';

export const STAGING_PREFIX = '.staging-';
const LINK_TEMP_PREFIX = '.current-';

export interface Store {
  prefix: string;
  name: string;
  dir: string;
}

export const storeOf = (prefix: string, name: string): Store => ({ prefix, name, dir: path.join(prefix, name) });
export const versionDir = (store: Store, version: string): string => path.join(store.dir, version);

/** Creates the store's directory (0755: the servers are for everyone who may run them), or a usage error naming the fix. */
export function ensureStore(store: Store, asRoot: boolean): void {
  try {
    mkdirsSayingWhy(store.dir, 0o755);
    const st = fs.lstatSync(store.dir);
    if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    fs.accessSync(store.dir, fs.constants.W_OK);
    if (asRoot && (st.uid !== 0 || (st.mode & 0o022) !== 0))
      throw usageError(
        `${store.dir} is not root's alone (owner uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}), so root will not install a server there.`,
        `chown root: and chmod go-w it, or pass another --prefix`,
      );
  } catch (err) {
    if (err instanceof AgyError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new AgyError(EXIT.usage, 'server-prefix-unusable', `Cannot install under ${store.prefix} (${code}).`, {
      hint: asRoot
        ? 'pass a writable --prefix DIR'
        : 'pass a --prefix DIR you can write, or run as root for /opt/agyctl/servers',
    });
  }
}

/** The store's lock, held for the whole command: one install, switch or removal at a time. */
export function lockStore(store: Store): () => void {
  const lock = takePidLock(path.join(store.dir, '.lock'), {
    content: holderLine(),
    parse: parseHolderLine,
    alive: (h) => h.pid !== process.pid && sameProcessAlive(h.pid, h.start),
  });
  if (lock.taken) return lock.release;
  const by = lock.holder ? ` (pid ${lock.holder.pid})` : '';
  throw new AgyError(EXIT.usage, 'server-busy', `Another agyctl server command${by} is working on ${store.dir}.`, {
    hint: 'wait for it to finish, then run this again',
  });
}

/** Removes what a killed install left: staging directories and half-made `current` links. Run under the lock. */
export function sweepLeftovers(store: Store): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(store.dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(STAGING_PREFIX) && !name.startsWith(LINK_TEMP_PREFIX)) continue;
    fs.rmSync(path.join(store.dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

export function makeStaging(store: Store): string {
  return fs.mkdtempSync(path.join(store.dir, STAGING_PREFIX));
}

/** Points `current` at `version` (or removes it: undefined) in one rename. */
export function switchCurrent(store: Store, version: string | undefined): void {
  const link = path.join(store.dir, CURRENT_LINK);
  if (version === undefined) {
    fs.rmSync(link, { force: true });
  } else {
    const temp = path.join(store.dir, `${LINK_TEMP_PREFIX}${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    fs.symlinkSync(version, temp);
    fs.renameSync(temp, link);
  }
  fsyncDir(store.dir);
}

export interface Installed extends InstalledMeta {
  current: boolean;
  path: string;
}

/** Every installed version (a directory with its record), oldest install first. */
export function listInstalled(store: Store): Installed[] {
  let names: string[];
  try {
    names = fs.readdirSync(store.dir);
  } catch {
    return [];
  }
  const current = currentVersion(store.dir);
  const out: Installed[] = [];
  for (const name of names) {
    if (!VERSION_NAME.test(name) || name === CURRENT_LINK) continue;
    const dir = versionDir(store, name);
    if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    const meta = readMeta(store.dir, name);
    if (!meta) continue;
    out.push({ ...meta, name: store.name, version: name, current: name === current, path: dir });
  }
  return out.sort((a, b) => a.installedAt.localeCompare(b.installedAt) || a.version.localeCompare(b.version));
}

export function findInstalled(store: Store, version: string): Installed {
  const found = listInstalled(store).find((v) => v.version === version);
  if (!found)
    throw new AgyError(
      EXIT.usage,
      'server-version-not-installed',
      `Version ${showUntrusted(version)} is not installed under ${store.dir}.`,
      {
        hint: 'see what is installed with `agyctl server list`',
      },
    );
  return found;
}

/** Removes a version's directory and record (never the current one: the caller checks). */
export function removeVersion(store: Store, version: string): void {
  // Moved aside first: a kill midway leaves a staging directory the next command sweeps, never half a version.
  const aside = `${makeStaging(store)}-rm`;
  fs.renameSync(versionDir(store, version), aside);
  fs.rmSync(metaFile(store.dir, version), { force: true });
  fs.rmSync(aside, { recursive: true, force: true });
  fs.rmSync(aside.slice(0, -3), { recursive: true, force: true });
}
