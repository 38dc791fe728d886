/**
 * Debian's ansible-playbook run in a lab namespace against the collection in
 * this checkout (<controller>/collections/ansible_collections/agyctl/fleet
 * links to ansible/), with its PLAY RECAP parsed per host.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.js';
import type { RunInNs } from './ns-lab.js';

export const PLAYBOOKS = path.join(ROOT, 'ansible', 'playbooks');

export interface Recap {
  ok: number;
  changed: number;
  unreachable: number;
  failed: number;
}

export interface PlayRun {
  code: number;
  out: string;
  recap: Map<string, Recap>;
}

/** A controller directory where Ansible finds the collection; made once. */
export function controllerDir(dir: string): string {
  const link = path.join(dir, 'collections', 'ansible_collections', 'agyctl', 'fleet');
  if (!fs.existsSync(link)) {
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'ansible'), link);
  }
  return dir;
}

export function parseRecap(out: string): Map<string, Recap> {
  const recap = new Map<string, Recap>();
  const at = out.lastIndexOf('PLAY RECAP');
  for (const line of out.slice(at).split('\n')) {
    const m = /^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)/.exec(line);
    if (m)
      recap.set(m[1]!, { ok: Number(m[2]), changed: Number(m[3]), unreachable: Number(m[4]), failed: Number(m[5]) });
  }
  return recap;
}

export interface PlayOptions {
  run: RunInNs;
  /** The namespace the controller runs in. */
  ns: string;
  dir: string;
  inventory: string;
  /** Prepended to PATH (e.g. an ssh wrapper). */
  pathPrefix?: string;
  timeoutMs?: number;
}

export async function ansiblePlay(o: PlayOptions, playbook: string, extra: string[] = []): Promise<PlayRun> {
  const dir = controllerDir(o.dir);
  const env = {
    PATH: o.pathPrefix ? `${o.pathPrefix}:${process.env.PATH}` : (process.env.PATH ?? ''),
    HOME: dir,
    LANG: 'C.UTF-8',
    ANSIBLE_COLLECTIONS_PATH: path.join(dir, 'collections'),
    ANSIBLE_LOCAL_TEMP: path.join(dir, 'tmp'),
    ANSIBLE_SSH_CONTROL_PATH_DIR: path.join(dir, 'cp'),
    ANSIBLE_FORKS: '5',
    ANSIBLE_PIPELINING: '1',
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_RETRY_FILES_ENABLED: '0',
    ANSIBLE_DEPRECATION_WARNINGS: '0',
    // Where a play's time goes: each task's duration per host, as JUnit XML (ansible-core's own callback).
    ...(process.env.AGYCTL_TEST_ANSIBLE_JUNIT
      ? { ANSIBLE_CALLBACKS_ENABLED: 'junit', JUNIT_OUTPUT_DIR: process.env.AGYCTL_TEST_ANSIBLE_JUNIT }
      : {}),
  };
  const r = await o.run(o.ns, 'ansible-playbook', ['-i', o.inventory, playbook, ...extra], {
    env,
    timeoutMs: o.timeoutMs ?? 180_000,
    cwd: dir,
  });
  const out = `${String(r.stdout)}\n${String(r.stderr)}`;
  return { code: r.exitCode ?? -1, out, recap: parseRecap(out) };
}
