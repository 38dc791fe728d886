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
 * The two-namespace lab (netns.ts) is unchanged; this one shares its helpers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { BIN, SIM } from './cli.js';
import { ip, isZombie, keygen, killGroup, namespaceObstacle, type RunInNsOptions, which } from './netns.js';

const SSHD_READY_MS = 10_000;
const NODE = process.execPath;

export interface FleetHost {
  /** The ssh alias on the laptop: h1, h2, ... */
  name: string;
  ns: string;
  addr: string;
  dir: string;
  home: string;
  stateDir: string;
  /** The PATH directory with `agyctl` and `agy_acp_server`. */
  bin: string;
  sshdPid(): number | undefined;
  startSshd(): Promise<void>;
  stopSshd(): Promise<void>;
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
  run(ns: string, file: string, args: string[], options?: RunInNsOptions): ResultPromise;
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

async function addNamespace(ns: string): Promise<string | undefined> {
  let r = await ip(['netns', 'add', ns]);
  if (!r.ok && /exists/i.test(r.out)) {
    await ip(['netns', 'del', ns]); // a dead worker with our pid left it: the name is ours
    r = await ip(['netns', 'add', ns]);
  }
  return r.ok ? undefined : `\`ip netns add\` failed: ${r.out}`;
}

async function link(host: string, laptop: string, i: number): Promise<string | undefined> {
  const steps: string[][] = [
    ['link', 'add', 'agy0', 'netns', host, 'type', 'veth', 'peer', 'name', `agyh${i}`, 'netns', laptop],
    ['-n', host, 'addr', 'add', `10.204.${i}.1/24`, 'dev', 'agy0'],
    ['-n', laptop, 'addr', 'add', `10.204.${i}.2/24`, 'dev', `agyh${i}`],
    ['-n', host, 'link', 'set', 'lo', 'up'],
    ['-n', host, 'link', 'set', 'agy0', 'up'],
    ['-n', laptop, 'link', 'set', `agyh${i}`, 'up'],
  ];
  for (const step of steps) {
    const r = await ip(step);
    if (!r.ok) return `\`ip ${step.join(' ')}\` failed: ${r.out}`;
  }
  return undefined;
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
  fs.writeFileSync(
    path.join(dir, 'sshd_config'),
    [
      'Port 22',
      `ListenAddress ${addr}`,
      `HostKey ${path.join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'AllowTcpForwarding yes',
      'X11Forwarding no',
      'PrintMotd no',
      'MaxStartups 50',
      'Subsystem sftp internal-sftp',
      'LogLevel INFO',
      `SetEnv ${Object.entries(vars)
        .map(([k, v]) => quoteSetEnv(k, v))
        .join(' ')}`,
      '',
    ].join('\n'),
  );
  return { home, bin };
}

function sshdControl(ns: string, sshd: string, config: string): Pick<FleetHost, 'sshdPid' | 'startSshd' | 'stopSshd'> {
  let daemon: ResultPromise | undefined;
  const control = {
    sshdPid: () => (daemon && daemon.exitCode === null ? daemon.pid : undefined),
    async startSshd() {
      if (control.sshdPid()) return;
      let log = '';
      const child = execa('ip', ['netns', 'exec', ns, sshd, '-D', '-e', '-f', config], {
        reject: false,
        stdin: 'ignore',
        buffer: false,
        cleanup: true,
      });
      daemon = child;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`sshd in ${ns} did not start within ${SSHD_READY_MS} ms: ${log}`)),
          SSHD_READY_MS,
        );
        child.stderr!.on('data', (chunk: Buffer) => {
          log += chunk.toString();
          if (/Server listening on/.test(log)) {
            clearTimeout(timer);
            resolve();
          }
        });
        void child.then(() => {
          clearTimeout(timer);
          reject(new Error(`sshd in ${ns} exited at start: ${log}`));
        });
      });
    },
    async stopSshd() {
      const child = daemon;
      daemon = undefined;
      if (!child || child.exitCode !== null) return;
      child.kill('SIGTERM');
      const stopped = await Promise.race([
        child.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5_000)),
      ]);
      if (!stopped) child.kill('SIGKILL');
    },
  };
  return control;
}

export async function createFleetLab(options: FleetLabOptions = {}): Promise<FleetLabResult> {
  const count = options.hosts ?? 3;
  const obstacle = await namespaceObstacle();
  if (obstacle) return { unavailable: obstacle };
  const sshd = which('sshd', ['/usr/sbin', '/sbin']);
  const ssh = which('ssh');
  if (!sshd || !ssh || !which('ssh-keygen'))
    throw new Error(
      'OpenSSH (openssh-server and openssh-client) is not installed; .ci/run installs it: apt-get install openssh-server openssh-client',
    );
  serial += 1;
  const tag = `${process.pid}-${serial}`;
  const laptop = `agyctl-fl-laptop-${tag}`;
  const names = Array.from({ length: count }, (_, i) => `agyctl-fl-h${i + 1}-${tag}`);
  const created: string[] = [];
  const undo = async (): Promise<void> => {
    for (const ns of created) await ip(['netns', 'del', ns]);
  };
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
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const hosts: FleetHost[] = [];
  const known: string[] = [];
  const config = [
    'Host *',
    '  User root',
    '  GlobalKnownHostsFile /dev/null',
    `  UserKnownHostsFile ${path.join(dir, 'known_hosts')}`,
    '  StrictHostKeyChecking yes',
    '  BatchMode yes',
    '  ConnectTimeout 5',
    '  IdentitiesOnly yes',
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
  const sshBin = path.join(dir, 'bin');
  fs.mkdirSync(sshBin);
  fs.writeFileSync(path.join(sshBin, 'ssh'), `#!/bin/sh\nexec ${ssh} -F ${sshConfig} "$@"\n`, { mode: 0o755 });

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
    run: (ns, file, args, o = {}) =>
      execa('ip', ['netns', 'exec', ns, file, ...args], {
        env: o.env ?? process.env,
        extendEnv: false,
        reject: false,
        timeout: o.timeoutMs ?? 120_000,
        cwd: o.cwd ?? dir,
        buffer: true,
        detached: o.detached ?? false,
        ...(o.input !== undefined ? { input: o.input } : { stdin: o.stdin ?? 'ignore' }),
      }),
    async pids(ns) {
      const r = await ip(['netns', 'pids', ns]);
      return r.out
        .split(/\s+/)
        .filter(Boolean)
        .map(Number)
        .filter((pid) => !isZombie(pid));
    },
    async teardown() {
      for (const h of hosts) await h.stopSshd();
      for (const ns of [laptop, ...names]) {
        for (const pid of await lab.pids(ns)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
        await ip(['netns', 'del', ns]);
      }
      fs.rmSync(dir, { recursive: true, force: true });
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

/** The lab, or a printed reason and a runtime skip: only when namespaces cannot be created. */
export function requireFleetLab(result: FleetLabResult | undefined, ctx: { skip: (note?: string) => never }): FleetLab {
  if (result?.lab) return result.lab;
  if (!result) throw new Error('the fleet lab was not set up (did beforeAll fail?)');
  console.warn(`SKIPPED (fleet lab unavailable): ${result.unavailable}`);
  return ctx.skip(result.unavailable);
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
  afterEach(() => {
    for (const child of children) {
      killGroup(child, 'SIGKILL');
      child.kill('SIGKILL');
    }
    children.clear();
  });
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
