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
import { removeConversation } from '../acp/protocol.js';
import { tempRoot } from '../core/paths.js';
import { childPath } from '../core/safe-path.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { readFileNoFollow } from '../util/os/safe-fs.js';
import { geminiCliFiles } from './gemini-cli-paths.js';
import type { ProfileId, ServerProfile } from './types.js';

const PROBE_PREFIX = 'agyctl-probe-';

interface ProbeCleanup {
  /** Remove one probe session's traces; false when something could not be removed. */
  session(stateDir: string, sessionId: string, env: NodeJS.ProcessEnv): boolean;
  /** Called before a `probe --sign-in` starts the server; the function it returns cleans up after it stopped. */
  signIn(stateDir: string, env: NodeJS.ProcessEnv): () => void;
}

const PROBE_CLEANUP: Readonly<Record<ProfileId, ProbeCleanup>> = {
  antigravity: {
    session: (stateDir, sessionId) => removeConversation(stateDir, sessionId),
    signIn: () => () => {},
  },
  'gemini-cli': {
    session: (stateDir, _sessionId, env) => removeProbeProjects(stateDir, env).failed === 0,
    // The probe's cwd became a project: remove it, and a registry that only it needed.
    signIn(stateDir, env) {
      const registry = geminiCliFiles(stateDir).projects;
      const registryExisted = fs.existsSync(registry);
      return () => {
        removeProbeProjects(stateDir, env);
        if (!registryExisted && registryIsEmpty(registry)) fs.rmSync(registry, { force: true });
      };
    },
  },
};

export function removeProbeSession(
  profile: ServerProfile,
  stateDir: string,
  sessionId: string,
  env: NodeJS.ProcessEnv,
): boolean {
  return PROBE_CLEANUP[profile.id].session(stateDir, sessionId, env);
}

/** What `probe --sign-in` must undo in the state dir once its server stopped (call before starting it). */
export function signInProbeCleanup(profile: ServerProfile, stateDir: string, env: NodeJS.ProcessEnv): () => void {
  return PROBE_CLEANUP[profile.id].signIn(stateDir, env);
}

function registryIsEmpty(file: string): boolean {
  try {
    const data = JSON.parse(fs.readFileSync(file, 'utf8')) as { projects?: Record<string, unknown> };
    return Object.keys(data).every((k) => k === 'projects') && Object.keys(data.projects ?? {}).length === 0;
  } catch {
    return false;
  }
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
    writeFileAtomic(registry, `${JSON.stringify(data, null, 2)}`);
  } catch {
    /* unreadable or changed under us: leave it to gemini-cli */
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
