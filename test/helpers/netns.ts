/**
 * An SSH lab for end-to-end tests: two network namespaces, "remote" and
 * "laptop", joined by a veth pair (10.203.0.1 <-> 10.203.0.2), with OpenSSH's
 * sshd started in "remote" on a generated host key and one authorized
 * throwaway client key, and ssh client configs for "laptop". Everything
 * lives in one temp directory and goes away in teardown().
 *
 * Namespace names carry the test worker's pid, so test files running in
 * parallel each get their own pair. Needs root and `ip netns`; when the
 * namespaces cannot be created, createSshLab() says why and the tests skip
 * with that reason printed (requireLab). A missing sshd is a failure, not a
 * skip: .ci/run installs openssh-server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Sandbox } from './cli.js';

export const REMOTE_ADDR = '10.203.0.1';
export const LAPTOP_ADDR = '10.203.0.2';
const SSHD_READY_MS = 10_000;
const STEP_TIMEOUT_MS = 10_000;

export interface SshLab {
  remote: string;
  laptop: string;
  dir: string;
  clientKey: string;
  knownHosts: string;
  /** A PATH directory whose `ssh` adds `-F` with the key and known_hosts (runs commands verbatim). */
  sshFullBin: string;
  /** A PATH directory whose `ssh` adds `-F` with neither (key and known_hosts must come as -o options). */
  sshBareBin: string;
  sshdPid(): number | undefined;
  startSshd(): Promise<void>;
  stopSshd(): Promise<void>;
  /** `ip netns exec <ns> file args...`: the command runs in that namespace (same pid and mount namespace). */
  run(ns: string, file: string, args: string[], options?: RunInNsOptions): ResultPromise;
  pids(ns: string): Promise<number[]>;
  /** Is something listening on <port> (any local address) in that namespace? */
  listening(ns: string, port: number): Promise<boolean>;
  teardown(): Promise<void>;
}

export interface RunInNsOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  input?: string;
  stdin?: 'pipe' | 'ignore';
  cwd?: string;
  /** Its own process group, so killGroup() reaches a shell's children too. */
  detached?: boolean;
}

export type LabResult = { lab: SshLab; unavailable?: undefined } | { lab?: undefined; unavailable: string };

let serial = 0;

export async function ip(args: string[]): Promise<{ ok: boolean; out: string }> {
  const r = await execa('ip', args, { reject: false, timeout: STEP_TIMEOUT_MS, stdin: 'ignore' });
  return { ok: r.exitCode === 0, out: `${String(r.stdout)}${String(r.stderr)}`.trim() };
}

export function which(name: string, extra: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), ...extra];
  for (const d of dirs) {
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** Why namespaces cannot be created here, or undefined when they can. */
export async function namespaceObstacle(): Promise<string | undefined> {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'creating network namespaces needs root (CI runs as root)';
  if (!which('ip', ['/usr/sbin', '/sbin'])) return 'the `ip` command (iproute2) is not installed';
  return undefined;
}

async function createPair(remote: string, laptop: string): Promise<string | undefined> {
  for (const ns of [remote, laptop]) {
    let r = await ip(['netns', 'add', ns]);
    if (!r.ok && /exists/i.test(r.out)) {
      // A previous run of a worker with the same pid died before its teardown: the name is ours.
      await ip(['netns', 'del', ns]);
      r = await ip(['netns', 'add', ns]);
    }
    if (!r.ok) return `\`ip netns add\` failed: ${r.out}`;
  }
  const steps: string[][] = [
    ['link', 'add', 'agy0', 'netns', remote, 'type', 'veth', 'peer', 'name', 'agy0', 'netns', laptop],
    ['-n', remote, 'addr', 'add', `${REMOTE_ADDR}/24`, 'dev', 'agy0'],
    ['-n', laptop, 'addr', 'add', `${LAPTOP_ADDR}/24`, 'dev', 'agy0'],
    ['-n', remote, 'link', 'set', 'lo', 'up'],
    ['-n', laptop, 'link', 'set', 'lo', 'up'],
    ['-n', remote, 'link', 'set', 'agy0', 'up'],
    ['-n', laptop, 'link', 'set', 'agy0', 'up'],
  ];
  for (const step of steps) {
    const r = await ip(step);
    if (!r.ok) return `\`ip ${step.join(' ')}\` failed: ${r.out}`;
  }
  return undefined;
}

export async function keygen(file: string): Promise<void> {
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'agyctl-test', '-f', file], {
    timeout: STEP_TIMEOUT_MS,
    stdin: 'ignore',
  });
}

function writeConfigs(dir: string, sshBin: string): { full: string; bare: string; fullBin: string; bareBin: string } {
  const hostKey = path.join(dir, 'host_key');
  fs.writeFileSync(
    path.join(dir, 'sshd_config'),
    [
      'Port 22',
      `ListenAddress ${REMOTE_ADDR}`,
      `HostKey ${hostKey}`,
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
      'LogLevel INFO',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'known_hosts'), `${REMOTE_ADDR} ${fs.readFileSync(`${hostKey}.pub`, 'utf8')}`);
  fs.copyFileSync(path.join(dir, 'client_key.pub'), path.join(dir, 'authorized_keys'));
  const common = [
    'Host *',
    '  User root',
    '  GlobalKnownHostsFile /dev/null',
    '  StrictHostKeyChecking yes',
    '  BatchMode yes',
    '  ConnectTimeout 5',
    '  IdentitiesOnly yes',
  ];
  const full = path.join(dir, 'ssh_config_full');
  const bare = path.join(dir, 'ssh_config_bare');
  fs.writeFileSync(
    full,
    [
      ...common,
      `  IdentityFile ${path.join(dir, 'client_key')}`,
      `  UserKnownHostsFile ${path.join(dir, 'known_hosts')}`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(bare, [...common, '  UserKnownHostsFile /dev/null', ''].join('\n'));
  const wrapper = (name: string, config: string): string => {
    const bin = path.join(dir, name);
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'ssh'), `#!/bin/sh\nexec ${sshBin} -F ${config} "$@"\n`, { mode: 0o755 });
    return bin;
  };
  return { full, bare, fullBin: wrapper('bin-full', full), bareBin: wrapper('bin-bare', bare) };
}

export async function createSshLab(): Promise<LabResult> {
  const obstacle = await namespaceObstacle();
  if (obstacle) return { unavailable: obstacle };
  const sshd = which('sshd', ['/usr/sbin', '/sbin']);
  const ssh = which('ssh');
  if (!sshd || !ssh || !which('ssh-keygen'))
    throw new Error(
      'OpenSSH (openssh-server and openssh-client) is not installed; .ci/run installs it: apt-get install openssh-server openssh-client',
    );
  serial += 1;
  const remote = `agyctl-remote-${process.pid}-${serial}`;
  const laptop = `agyctl-laptop-${process.pid}-${serial}`;
  const failed = await createPair(remote, laptop);
  if (failed) {
    await ip(['netns', 'del', remote]);
    await ip(['netns', 'del', laptop]);
    return { unavailable: `network namespaces cannot be created here: ${failed}` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-sshlab-'));
  fs.chmodSync(dir, 0o700);
  await keygen(path.join(dir, 'host_key'));
  await keygen(path.join(dir, 'client_key'));
  const cfg = writeConfigs(dir, ssh);
  // sshd refuses to start without its privilege separation directory.
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  let daemon: ResultPromise | undefined;
  let daemonLog = '';
  const run: SshLab['run'] = (ns, file, args, options = {}) =>
    execa('ip', ['netns', 'exec', ns, file, ...args], {
      env: options.env ?? process.env,
      extendEnv: false,
      reject: false,
      timeout: options.timeoutMs ?? 60_000,
      cwd: options.cwd ?? dir,
      buffer: true,
      detached: options.detached ?? false,
      ...(options.input !== undefined ? { input: options.input } : { stdin: options.stdin ?? 'ignore' }),
    });

  const lab: SshLab = {
    remote,
    laptop,
    dir,
    clientKey: path.join(dir, 'client_key'),
    knownHosts: path.join(dir, 'known_hosts'),
    sshFullBin: cfg.fullBin,
    sshBareBin: cfg.bareBin,
    sshdPid: () => (daemon && daemon.exitCode === null ? daemon.pid : undefined),
    async startSshd() {
      if (lab.sshdPid()) return;
      daemonLog = '';
      const child = execa('ip', ['netns', 'exec', remote, sshd, '-D', '-e', '-f', path.join(dir, 'sshd_config')], {
        reject: false,
        stdin: 'ignore',
        buffer: false,
        cleanup: true,
      });
      daemon = child;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`sshd did not start within ${SSHD_READY_MS} ms: ${daemonLog}`)),
          SSHD_READY_MS,
        );
        child.stderr!.on('data', (chunk: Buffer) => {
          daemonLog += chunk.toString();
          if (/Server listening on/.test(daemonLog)) {
            clearTimeout(timer);
            resolve();
          }
        });
        void child.then(() => {
          clearTimeout(timer);
          reject(new Error(`sshd exited at start: ${daemonLog}`));
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
    run,
    async pids(ns) {
      const r = await ip(['netns', 'pids', ns]);
      return r.out
        .split(/\s+/)
        .filter(Boolean)
        .map(Number)
        .filter((pid) => !isZombie(pid));
    },
    async listening(ns, port) {
      const r = await run(ns, 'ss', ['-Hltn'], { timeoutMs: STEP_TIMEOUT_MS });
      // Columns: State Recv-Q Send-Q Local:Port Peer:Port; any local address on that port counts (127.0.0.1 or [::1]).
      return String(r.stdout)
        .split('\n')
        .some((line) => line.trim().split(/\s+/)[3]?.endsWith(`:${port}`));
    },
    async teardown() {
      await lab.stopSshd();
      for (const ns of [remote, laptop]) {
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
    await lab.startSshd();
  } catch (err) {
    await lab.teardown();
    throw err;
  }
  return { lab };
}

/** Signal a detached child's whole process group (a `sh -c` does not exec its command). */
export function killGroup(child: ResultPromise, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

export function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // gone
  }
}

/** The lab, or a printed reason and a runtime skip: only when namespaces cannot be created. */
export function requireLab(result: LabResult | undefined, ctx: { skip: (note?: string) => never }): SshLab {
  if (result?.lab) return result.lab;
  if (!result) throw new Error('the SSH lab was not set up (did beforeAll fail?)');
  const reason = result.unavailable;
  console.warn(`SKIPPED (SSH lab unavailable): ${reason}`);
  return ctx.skip(reason);
}

/** Wait (bounded) for a condition that a background process brings about. */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The lab for one test file: created before its tests, torn down after them;
 * every child a test tracks is killed (with its group) and every sandbox it
 * tracks removed after each test.
 */
export interface LabFixture {
  /** The lab, or why it could not be made (pass to requireLab). */
  result(): LabResult | undefined;
  track<T extends ResultPromise>(child: T): T;
  keep(...sandboxes: Sandbox[]): void;
}

export function useSshLab(): LabFixture {
  let labResult: LabResult | undefined;
  const children = new Set<ResultPromise>();
  const sandboxes: Sandbox[] = [];
  beforeAll(async () => {
    labResult = await createSshLab();
  }, 60_000);
  afterEach(() => {
    for (const child of children) {
      killGroup(child, 'SIGKILL');
      child.kill('SIGKILL');
    }
    children.clear();
    for (const s of sandboxes.splice(0)) s.cleanup();
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
    keep: (...s) => void sandboxes.push(...s),
  };
}
