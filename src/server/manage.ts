/**
 * `agyctl server list | use | remove | prune | status`: the installed
 * versions of a server under a prefix. Every command takes the store's lock
 * and first sweeps what a killed install left.
 */

import fs from 'node:fs';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { currentVersion } from '../profiles/installed-server.js';
import { type ProofSetup, proofTarget } from './proof-target.js';
import { type ProofStep, proofFailure, prove, proveStarts } from './prove.js';
import {
  findInstalled,
  type Installed,
  listInstalled,
  lockStore,
  removeVersion,
  type Store,
  storeOf,
  sweepLeftovers,
  switchCurrent,
  versionDir,
} from './store.js';

export interface ServerEntry {
  name: string;
  version: string;
  current: boolean;
  sha256: string;
  bytes: number;
  installedAt: string;
  path: string;
  /** The server's command, relative to `path`, and its arguments (from agent.json, else the known layout). */
  cmd: string;
  args: string[];
}

const entryOf = (v: Installed): ServerEntry => ({
  name: v.name,
  version: v.version,
  current: v.current,
  sha256: v.sha256,
  bytes: v.bytes,
  installedAt: v.installedAt,
  path: v.path,
  cmd: v.cmd,
  args: [...v.args],
});

/** Runs `work` under the store's lock after the sweep; a store that does not exist yet is empty. */
async function withStore<T>(prefix: string, name: string, work: (store: Store) => Promise<T> | T): Promise<T> {
  const store = storeOf(prefix, name);
  if (!fs.existsSync(store.dir)) return work(store);
  let release: (() => void) | undefined;
  try {
    release = lockStore(store);
  } catch (err) {
    if (
      !(err instanceof AgyError) &&
      ['EACCES', 'EROFS', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '')
    ) {
      return work(store); // a reader without write access: nothing to sweep, nothing to change
    }
    throw err;
  }
  try {
    sweepLeftovers(store);
    return await work(store);
  } finally {
    release();
  }
}

export function listServers(prefix: string, name: string): Promise<ServerEntry[]> {
  return withStore(prefix, name, (store) => listInstalled(store).map(entryOf));
}

export interface UseReport {
  version: string;
  previous: string | null;
  proof: ProofStep[] | null;
}

export function useServer(
  io: CommandIO,
  prefix: string,
  name: string,
  version: string,
  setup: ProofSetup,
): Promise<UseReport> {
  return withStore(prefix, name, async (store) => {
    findInstalled(store, version);
    const previous = currentVersion(store.dir);
    switchCurrent(store, version);
    if (!setup.prove) return { version, previous: previous ?? null, proof: null };
    const steps = await prove(proofTarget(io, setup, versionDir(store, version), store));
    const failed = steps.find((s) => s.exit !== EXIT.ok);
    if (failed) {
      switchCurrent(store, previous);
      throw proofFailure(failed, previous, version);
    }
    return { version, previous: previous ?? null, proof: steps };
  });
}

export function removeServer(prefix: string, name: string, version: string): Promise<ServerEntry> {
  return withStore(prefix, name, (store) => {
    const found = findInstalled(store, version);
    if (found.current)
      throw new AgyError(
        EXIT.usage,
        'server-version-current',
        `Version ${version} is the current one; agyctl will not remove it.`,
        {
          hint: 'switch to another first (`agyctl server use VERSION`), then remove it',
        },
      );
    removeVersion(store, version);
    return entryOf(found);
  });
}

/** Keeps the current version and the newest others, `keep` in all; removes the rest. */
export function pruneServers(
  prefix: string,
  name: string,
  keep: number,
): Promise<{ removed: ServerEntry[]; kept: ServerEntry[] }> {
  if (!Number.isInteger(keep) || keep < 1)
    throw usageError('--keep must be a whole number of at least 1.', 'e.g. --keep 2');
  return withStore(prefix, name, (store) => {
    const all = listInstalled(store);
    const newestFirst = [...all].reverse();
    const kept = [...newestFirst.filter((v) => v.current), ...newestFirst.filter((v) => !v.current)].slice(0, keep);
    const removed = all.filter((v) => !kept.includes(v));
    for (const v of removed) removeVersion(store, v.version);
    return { removed: removed.map(entryOf), kept: kept.map(entryOf) };
  });
}

export interface StatusReport {
  installed: ServerEntry | null;
  reported: string | null;
  /** The reported text names a version number other than the installed one. */
  mismatch: boolean;
  proof: ProofStep | null;
}

/** Version numbers (two or more dotted parts) a text names. */
export const versionNumbers = (text: string): string[] => [...text.matchAll(/\d+(?:\.\d+)+/g)].map((m) => m[0]);

/** A finding only when the reported text names a version number, and not the installed one's. */
export function versionsDiffer(installed: string, reported: string | null): boolean {
  if (!reported) return false;
  const named = versionNumbers(reported);
  if (named.length === 0) return false;
  const ours = versionNumbers(installed);
  return !named.some((n) => ours.includes(n) || installed === n);
}

export function serverStatus(io: CommandIO, prefix: string, name: string, setup: ProofSetup): Promise<StatusReport> {
  return withStore(prefix, name, async (store) => {
    const current = listInstalled(store).find((v) => v.current);
    if (!current) return { installed: null, reported: null, mismatch: false, proof: null };
    const step = await proveStarts(proofTarget(io, setup, current.path, store));
    const reported = step.reportedVersion ?? null;
    return { installed: entryOf(current), reported, mismatch: versionsDiffer(current.version, reported), proof: step };
  });
}
