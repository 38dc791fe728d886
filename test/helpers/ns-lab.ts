/**
 * The pieces both SSH labs are built from (netns.ts: a remote and a laptop;
 * fleet-lab.ts: N hosts and a laptop): network namespaces, OpenSSH's sshd
 * run in one, commands run in one, and the teardown that leaves no process,
 * namespace or file behind. Needs root and `ip netns`; a lab that cannot get
 * its namespaces says why (namespaceObstacle) and its tests fail with that
 * reason. A missing sshd is a failure too: scripts/test-deps.sh installs
 * openssh-server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';

const SSHD_READY_MS = 10_000;
export const STEP_TIMEOUT_MS = 10_000;

export interface RunInNsOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  input?: string;
  stdin?: 'pipe' | 'ignore';
  cwd?: string;
  /** Its own process group, so killGroup() reaches a shell's children too. */
  detached?: boolean;
}

/** `ip netns exec <ns> file args...`: the command runs in that namespace (same pid and mount namespace). */
export type RunInNs = (ns: string, file: string, args: string[], options?: RunInNsOptions) => ResultPromise;

export interface SshdControl {
  sshdPid(): number | undefined;
  startSshd(): Promise<void>;
  stopSshd(): Promise<void>;
}

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

/** sshd and ssh, or a failure naming the packages (never a skip). */
export function requireOpenSsh(): { sshd: string; ssh: string } {
  const sshd = which('sshd', ['/usr/sbin', '/sbin']);
  const ssh = which('ssh');
  if (!sshd || !ssh || !which('ssh-keygen'))
    throw new Error(
      'OpenSSH (openssh-server and openssh-client) is not installed; .ci/run installs it: apt-get install openssh-server openssh-client',
    );
  // sshd refuses to start without its privilege separation directory.
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  return { sshd, ssh };
}

/** A new namespace; undefined when made, else why not. */
export async function addNamespace(ns: string): Promise<string | undefined> {
  let r = await ip(['netns', 'add', ns]);
  if (!r.ok && /exists/i.test(r.out)) {
    // A previous run of a worker with the same pid died before its teardown: the name is ours.
    await ip(['netns', 'del', ns]);
    r = await ip(['netns', 'add', ns]);
  }
  return r.ok ? undefined : `\`ip netns add\` failed: ${r.out}`;
}

/** Run `ip` steps in order; undefined when all worked, else the first failure. */
export async function ipSteps(steps: string[][]): Promise<string | undefined> {
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

/** sshd -D in `ns` with `config`: started (waiting for "Server listening"), stopped, its pid. */
export function sshdControl(ns: string, sshd: string, config: string): SshdControl {
  let daemon: ResultPromise | undefined;
  const control: SshdControl = {
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

/** A runner of commands in the lab's namespaces, in `dir` unless told otherwise. */
export function runnerIn(dir: string, defaultTimeoutMs: number): RunInNs {
  return (ns, file, args, o = {}) =>
    execa('ip', ['netns', 'exec', ns, file, ...args], {
      env: o.env ?? process.env,
      extendEnv: false,
      reject: false,
      timeout: o.timeoutMs ?? defaultTimeoutMs,
      cwd: o.cwd ?? dir,
      buffer: true,
      detached: o.detached ?? false,
      ...(o.input !== undefined ? { input: o.input } : { stdin: o.stdin ?? 'ignore' }),
    });
}

/** The live (not zombie) processes in a namespace. */
export async function nsPids(ns: string): Promise<number[]> {
  const r = await ip(['netns', 'pids', ns]);
  return r.out
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .filter((pid) => !isZombie(pid));
}

/** Kill whatever still runs in the namespaces, delete them, remove the lab's directory (when it has one yet). */
export async function removeNamespaces(namespaces: string[], dir?: string): Promise<void> {
  for (const ns of namespaces) {
    for (const pid of await nsPids(ns)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await ip(['netns', 'del', ns]);
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

/** Signal a detached child's whole process group (a `sh -c` does not exec its command). */
export function killGroup(child: ResultPromise, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

/** After each test: the children it tracked, with their groups. */
export function killTracked(children: Set<ResultPromise>): void {
  for (const child of children) {
    killGroup(child, 'SIGKILL');
    child.kill('SIGKILL');
  }
  children.clear();
}

export function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // gone
  }
}

/**
 * The lab, or a failure naming why it cannot be made here (root, iproute2):
 * a test that cannot run fails, it never skips. `ctx` is the test's context,
 * kept so callers read the same wherever a lab is required.
 */
export function requireLabOf<T>(
  what: string,
  result: { lab: T; unavailable?: undefined } | { lab?: undefined; unavailable: string } | undefined,
  _ctx?: unknown,
): T {
  if (result?.lab) return result.lab;
  if (!result) throw new Error(`the ${what} was not set up (did beforeAll fail?)`);
  throw new Error(
    `the ${what} cannot run here: ${result.unavailable}; scripts/test-deps.sh names what the suite needs`,
  );
}

/** Between two looks into a namespace (each runs `ip netns pids` or a socket listing), for until(). */
export const LAB_POLL_MS = 100;

/** The sshd_config of a lab sshd on `addr`: its files in `dir`, keys only, root allowed, forwarding on. */
export function sshdConfigLines(dir: string, addr: string): string[] {
  return [
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
    'LogLevel INFO',
  ];
}

/** The laptop's ssh_config defaults: root, host keys checked strictly, never a prompt. */
export const SSH_CLIENT_DEFAULTS = [
  'Host *',
  '  User root',
  '  GlobalKnownHostsFile /dev/null',
  '  StrictHostKeyChecking yes',
  '  BatchMode yes',
  '  ConnectTimeout 5',
  '  IdentitiesOnly yes',
];

/** A PATH directory `bin` whose `ssh` is the real one with `-F config`. */
export function sshWrapper(bin: string, ssh: string, config: string): string {
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'ssh'), `#!/bin/sh\nexec ${ssh} -F ${config} "$@"\n`, { mode: 0o755 });
  return bin;
}
