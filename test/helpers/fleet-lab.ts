/**
 * A fleet SSH lab for end-to-end tests: N "host" network namespaces (N >= 3)
 * and one "laptop" namespace, each host joined to the laptop by its own veth
 * pair (10.204.<i>.1 on host i, 10.204.<i>.2 on the laptop). Every host runs
 * its own sshd on its own host key, and its sessions get their own HOME,
 * TMPDIR and PATH (sshd's SetEnv): PATH starts with a per-host bin directory
 * holding `agyctl` (the built binary) and `agy_acp_server` (the simulator),
 * so `agyctl` on PATH and the server by name work as on a real box. Sessions
 * log in as root (separate Unix users would mean editing this machine's
 * /etc/passwd); each host's HOME is its own, which is what agyctl and
 * Ansible key their state on.
 *
 * The laptop's `ssh` is a PATH wrapper adding `-F <config>` with one `Host
 * h<i>` alias per host, the client key and a known_hosts of every host key:
 * `ssh h2`, Ansible and `agyctl connect h1 h2 h3` all just work there.
 * Built from ns-lab.ts, as the two-namespace lab (netns.ts) is.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { BIN, SIM } from './cli.js';
import {
  addNamespace,
  ip,
  ipSteps,
  keygen,
  killTracked,
  namespaceObstacle,
  nsPids,
  type RunInNs,
  removeNamespaces,
  requireLabOf,
  requireOpenSsh,
  runnerIn,
  SSH_CLIENT_DEFAULTS,
  type SshdControl,
  sshdConfigLines,
  sshdControl,
  sshWrapper,
} from './ns-lab.js';

const NODE = process.execPath;

export interface FleetHost extends SshdControl {
  /** The ssh alias on the laptop: h1, h2, ... */
  name: string;
  ns: string;
  addr: string;
  dir: string;
  home: string;
  stateDir: string;
  /** The PATH directory with `agyctl` and `agy_acp_server`. */
  bin: string;
}

export interface FleetLab {
  laptop: string;
  dir: string;
  hosts: FleetHost[];
  clientKey: string;
  knownHosts: string;
  sshConfig: string;
  /** A PATH directory whose `ssh` adds `-F sshConfig`. */
  sshBin: string;
  host(name: string): FleetHost;
  run: RunInNs;
  pids(ns: string): Promise<number[]>;
  teardown(): Promise<void>;
}

export type FleetLabResult = { lab: FleetLab; unavailable?: undefined } | { lab?: undefined; unavailable: string };

export interface FleetLabOptions {
  hosts?: number;
  /** Extra environment for every session on host i (0-based), e.g. AGY_SIM_* switches. */
  hostEnv?: (index: number) => Record<string, string>;
}

let serial = 0;

async function link(host: string, laptop: string, i: number): Promise<string | undefined> {
  return ipSteps([
    ['link', 'add', 'agy0', 'netns', host, 'type', 'veth', 'peer', 'name', `agyh${i}`, 'netns', laptop],
    ['-n', host, 'addr', 'add', `10.204.${i}.1/24`, 'dev', 'agy0'],
    ['-n', laptop, 'addr', 'add', `10.204.${i}.2/24`, 'dev', `agyh${i}`],
    ['-n', host, 'link', 'set', 'lo', 'up'],
    ['-n', host, 'link', 'set', 'agy0', 'up'],
    ['-n', laptop, 'link', 'set', `agyh${i}`, 'up'],
  ]);
}

const quoteSetEnv = (k: string, v: string): string => `"${k}=${v.replace(/"/g, '')}"`;

function writeHost(
  dir: string,
  addr: string,
  clientPub: string,
  env: Record<string, string>,
): { home: string; bin: string } {
  fs.mkdirSync(dir, { mode: 0o700 });
  const home = path.join(dir, 'home');
  const bin = path.join(dir, 'bin');
  const tmp = path.join(dir, 'tmp');
  for (const d of [home, bin, tmp]) fs.mkdirSync(d);
  fs.writeFileSync(path.join(bin, 'agyctl'), `#!/bin/sh\nexec ${NODE} ${BIN} "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'agy_acp_server'), `#!/bin/sh\nexec ${NODE} ${SIM} "$@"\n`, { mode: 0o755 });
  fs.copyFileSync(clientPub, path.join(dir, 'authorized_keys'));
  const vars = {
    HOME: home,
    TMPDIR: tmp,
    PATH: `${bin}:${path.dirname(NODE)}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    ...env,
  };
  const setEnv = Object.entries(vars)
    .map(([k, v]) => quoteSetEnv(k, v))
    .join(' ');
  const config = [...sshdConfigLines(dir, addr), 'MaxStartups 50', 'Subsystem sftp internal-sftp', `SetEnv ${setEnv}`];
  fs.writeFileSync(path.join(dir, 'sshd_config'), `${config.join('\n')}\n`);
  return { home, bin };
}

export async function createFleetLab(options: FleetLabOptions = {}): Promise<FleetLabResult> {
  const count = options.hosts ?? 3;
  const obstacle = await namespaceObstacle();
  if (obstacle) return { unavailable: obstacle };
  const { sshd, ssh } = requireOpenSsh();
  serial += 1;
  const tag = `${process.pid}-${serial}`;
  const laptop = `agyctl-fl-laptop-${tag}`;
  const names = Array.from({ length: count }, (_, i) => `agyctl-fl-h${i + 1}-${tag}`);
  const created: string[] = [];
  const undo = (): Promise<void> => removeNamespaces(created);
  for (const ns of [laptop, ...names]) {
    const failed = await addNamespace(ns);
    if (failed) {
      await undo();
      return { unavailable: `network namespaces cannot be created here: ${failed}` };
    }
    created.push(ns);
  }
  for (let i = 0; i < count; i += 1) {
    const failed = await link(names[i]!, laptop, i + 1);
    if (failed) {
      await undo();
      return { unavailable: `network namespaces cannot be linked here: ${failed}` };
    }
  }
  await ip(['-n', laptop, 'link', 'set', 'lo', 'up']);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-fleetlab-'));
  fs.chmodSync(dir, 0o700);
  const clientKey = path.join(dir, 'client_key');
  await keygen(clientKey);
  const hosts: FleetHost[] = [];
  const known: string[] = [];
  const config = [
    ...SSH_CLIENT_DEFAULTS,
    `  UserKnownHostsFile ${path.join(dir, 'known_hosts')}`,
    `  IdentityFile ${clientKey}`,
  ];
  for (let i = 0; i < count; i += 1) {
    const name = `h${i + 1}`;
    const addr = `10.204.${i + 1}.1`;
    const hostDir = path.join(dir, name);
    const { home, bin } = writeHost(hostDir, addr, `${clientKey}.pub`, options.hostEnv?.(i) ?? {});
    await keygen(path.join(hostDir, 'host_key'));
    known.push(`${addr} ${fs.readFileSync(path.join(hostDir, 'host_key.pub'), 'utf8').trim()}`);
    config.push(`Host ${name}`, `  HostName ${addr}`);
    hosts.push({
      name,
      ns: names[i]!,
      addr,
      dir: hostDir,
      home,
      bin,
      stateDir: path.join(home, '.gemini', 'antigravity-acp'),
      ...sshdControl(names[i]!, sshd, path.join(hostDir, 'sshd_config')),
    });
  }
  fs.writeFileSync(path.join(dir, 'known_hosts'), `${known.join('\n')}\n`);
  const sshConfig = path.join(dir, 'ssh_config');
  fs.writeFileSync(sshConfig, `${config.join('\n')}\n`);
  const sshBin = sshWrapper(path.join(dir, 'bin'), ssh, sshConfig);

  const lab: FleetLab = {
    laptop,
    dir,
    hosts,
    clientKey,
    knownHosts: path.join(dir, 'known_hosts'),
    sshConfig,
    sshBin,
    host: (name) => {
      const h = hosts.find((x) => x.name === name);
      if (!h) throw new Error(`no host ${name} in the fleet lab`);
      return h;
    },
    run: runnerIn(dir, 120_000),
    pids: nsPids,
    async teardown() {
      for (const h of hosts) await h.stopSshd();
      await removeNamespaces([laptop, ...names], dir);
    },
  };
  try {
    await Promise.all(hosts.map((h) => h.startSshd()));
  } catch (err) {
    await lab.teardown();
    throw err;
  }
  return { lab };
}

/** The lab, or a failure naming why namespaces cannot be created here. */
export function requireFleetLab(result: FleetLabResult | undefined, ctx?: unknown): FleetLab {
  return requireLabOf('fleet lab', result, ctx);
}

/** The fleet lab for one test file; children a test tracks are killed (with their group) after it. */
export function useFleetLab(options: FleetLabOptions = {}): {
  result(): FleetLabResult | undefined;
  track<T extends ResultPromise>(child: T): T;
} {
  let labResult: FleetLabResult | undefined;
  const children = new Set<ResultPromise>();
  beforeAll(async () => {
    labResult = await createFleetLab(options);
  }, 60_000);
  afterEach(() => killTracked(children));
  afterAll(async () => {
    await labResult?.lab?.teardown();
  });
  return {
    result: () => labResult,
    track: (child) => {
      children.add(child);
      return child;
    },
  };
}
