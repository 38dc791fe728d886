/**
 * Removing what a probe session (check --live, login's proof, logout's
 * confirmation) left in the server's state. antigravity: the
 * conversation's database files. gemini-cli: it registers every working
 * directory as a project (an entry in projects.json, and tmp/<slug>/ and
 * history/<slug>/ marked by a .project_root file holding the path), and the
 * session lives in tmp/<slug>/chats/. agyctl's probe directories are
 * private temporary dirs named agyctl-probe-*, so every project whose marker
 * names such a directory that no longer exists is ours and is removed,
 * including leftovers from runs that were killed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { removeConversation } from '../acp/probe-session.js';
import { geminiCliFiles, tempRoot } from '../core/paths.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { ownerFor, readFileNoFollow } from '../util/safe-fs.js';
import { childPath } from '../util/safe-path.js';
import type { ServerProfile } from './types.js';

const PROBE_PREFIX = 'agyctl-probe-';

export function removeProbeSession(
  profile: ServerProfile,
  stateDir: string,
  sessionId: string,
  env: NodeJS.ProcessEnv,
): boolean {
  if (profile.id === 'antigravity') return removeConversation(stateDir, sessionId);
  return removeProbeProjects(stateDir, env).failed === 0;
}

function isStaleProbeDir(owner: string, env: NodeJS.ProcessEnv): boolean {
  const dir = path.resolve(owner);
  return (
    path.dirname(dir) === path.resolve(tempRoot(env)) &&
    path.basename(dir).startsWith(PROBE_PREFIX) &&
    !fs.existsSync(dir)
  );
}

function readMarker(dir: string): string | undefined {
  try {
    return fs.readFileSync(path.join(dir, '.project_root'), 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function removeProbeProjects(stateDir: string, env: NodeJS.ProcessEnv): { removed: string[]; failed: number } {
  const files = geminiCliFiles(stateDir);
  const owners = new Set<string>();
  let failed = 0;
  const removed: string[] = [];
  for (const base of [files.tmp, files.history]) {
    let names: string[];
    try {
      names = fs.readdirSync(base);
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = childPath(base, name); // a listing's names are plain; checked anyway before an rm -rf
      const owner = readMarker(dir);
      if (!owner || !isStaleProbeDir(owner, env)) continue;
      owners.add(path.resolve(owner));
      try {
        fs.rmSync(dir, { recursive: true, force: true });
        removed.push(dir);
      } catch {
        failed++;
      }
    }
  }
  dropRegistryEntries(files.projects, owners, env);
  return { removed, failed };
}

/**
 * Drop the probe entries from projects.json under gemini-cli's own lock (a
 * `projects.json.lock` directory, proper-lockfile style). When a server holds
 * it, the entries stay: harmless, gemini-cli re-checks ownership markers.
 */
function dropRegistryEntries(registry: string, owners: Set<string>, env: NodeJS.ProcessEnv): void {
  if (!fs.existsSync(registry)) return;
  const lock = `${registry}.lock`;
  try {
    fs.mkdirSync(lock);
  } catch {
    return;
  }
  try {
    const data = JSON.parse(readFileNoFollow(registry).toString('utf8')) as { projects?: Record<string, string> }; // a linked registry is left alone
    const projects = data.projects ?? {};
    const stale = Object.keys(projects).filter((p) => owners.has(path.resolve(p)) || isStaleProbeDir(p, env));
    if (stale.length === 0) return;
    for (const p of stale) delete projects[p];
    writeFileAtomic(registry, `${JSON.stringify(data, null, 2)}`, { owner: ownerFor(path.dirname(registry)) });
  } catch {
    /* unreadable or changed under us: leave it to gemini-cli */
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
