/**
 * An SSH lab for end-to-end tests: two network namespaces, "remote" and
 * "laptop", joined by a veth pair (10.203.0.1 <-> 10.203.0.2), with OpenSSH's
 * sshd started in "remote" on a generated host key and one authorized
 * throwaway client key, and ssh client configs for "laptop". Everything
 * lives in one temp directory and goes away in teardown().
 *
 * Namespace names carry the test worker's pid, so test files running in
 * parallel each get their own pair. Built from ns-lab.ts (shared with the
 * fleet lab), which says why a lab cannot be made (a failure, never a skip).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  addNamespace,
  ipSteps,
  keygen,
  killTracked,
  LAB_POLL_MS,
  namespaceObstacle,
  nsPids,
  type RunInNs,
  removeNamespaces,
  requireLabOf,
  requireOpenSsh,
  runnerIn,
  SSH_CLIENT_DEFAULTS,
  type SshdControl,
  STEP_TIMEOUT_MS,
  sshdConfigLines,
  sshdControl,
  sshWrapper,
} from './ns-lab.js';
import { until } from './until.js';

export const REMOTE_ADDR = '10.203.0.1';
export const LAPTOP_ADDR = '10.203.0.2';
/** The remote as the laptop's ssh names it. */
export const DEST = `root@${REMOTE_ADDR}`;

export interface SshLab extends SshdControl {
  remote: string;
  laptop: string;
  dir: string;
  clientKey: string;
  knownHosts: string;
  /** A PATH directory whose `ssh` adds `-F` with the key and known_hosts (runs commands verbatim). */
  sshFullBin: string;
  /** A PATH directory whose `ssh` adds `-F` with neither (key and known_hosts must come as -o options). */
  sshBareBin: string;
  run: RunInNs;
  pids(ns: string): Promise<number[]>;
  /** Is something listening on <port> (any local address) in that namespace? */
  listening(ns: string, port: number): Promise<boolean>;
  /** Restart sshd with these sshd_config lines ahead of the lab's own (sshd takes a keyword's first value); [] restores the lab's. */
  configureSshd(lines: string[]): Promise<void>;
  teardown(): Promise<void>;
}

export type LabResult = { lab: SshLab; unavailable?: undefined } | { lab?: undefined; unavailable: string };

let serial = 0;

async function createPair(remote: string, laptop: string): Promise<string | undefined> {
  for (const ns of [remote, laptop]) {
    const failed = await addNamespace(ns);
    if (failed) return failed;
  }
  return ipSteps([
    ['link', 'add', 'agy0', 'netns', remote, 'type', 'veth', 'peer', 'name', 'agy0', 'netns', laptop],
    ['-n', remote, 'addr', 'add', `${REMOTE_ADDR}/24`, 'dev', 'agy0'],
    ['-n', laptop, 'addr', 'add', `${LAPTOP_ADDR}/24`, 'dev', 'agy0'],
    ['-n', remote, 'link', 'set', 'lo', 'up'],
    ['-n', laptop, 'link', 'set', 'lo', 'up'],
    ['-n', remote, 'link', 'set', 'agy0', 'up'],
    ['-n', laptop, 'link', 'set', 'agy0', 'up'],
  ]);
}

function writeSshdConfig(dir: string, first: string[] = []): void {
  fs.writeFileSync(path.join(dir, 'sshd_config'), `${[...first, ...sshdConfigLines(dir, REMOTE_ADDR)].join('\n')}\n`);
}

function writeConfigs(dir: string, sshBin: string): { fullBin: string; bareBin: string } {
  writeSshdConfig(dir);
  fs.writeFileSync(
    path.join(dir, 'known_hosts'),
    `${REMOTE_ADDR} ${fs.readFileSync(path.join(dir, 'host_key.pub'), 'utf8')}`,
  );
  fs.copyFileSync(path.join(dir, 'client_key.pub'), path.join(dir, 'authorized_keys'));
  const full = path.join(dir, 'ssh_config_full');
  const bare = path.join(dir, 'ssh_config_bare');
  fs.writeFileSync(
    full,
    [
      ...SSH_CLIENT_DEFAULTS,
      `  IdentityFile ${path.join(dir, 'client_key')}`,
      `  UserKnownHostsFile ${path.join(dir, 'known_hosts')}`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(bare, [...SSH_CLIENT_DEFAULTS, '  UserKnownHostsFile /dev/null', ''].join('\n'));
  return {
    fullBin: sshWrapper(path.join(dir, 'bin-full'), sshBin, full),
    bareBin: sshWrapper(path.join(dir, 'bin-bare'), sshBin, bare),
  };
}

export async function createSshLab(): Promise<LabResult> {
  const obstacle = await namespaceObstacle();
  if (obstacle) return { unavailable: obstacle };
  const { sshd, ssh } = requireOpenSsh();
  serial += 1;
  const remote = `agyctl-remote-${process.pid}-${serial}`;
  const laptop = `agyctl-laptop-${process.pid}-${serial}`;
  const failed = await createPair(remote, laptop);
  if (failed) {
    await removeNamespaces([remote, laptop]);
    return { unavailable: `network namespaces cannot be created here: ${failed}` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-sshlab-'));
  fs.chmodSync(dir, 0o700);
  await keygen(path.join(dir, 'host_key'));
  await keygen(path.join(dir, 'client_key'));
  const cfg = writeConfigs(dir, ssh);
  const run = runnerIn(dir, 60_000);
  const lab: SshLab = {
    remote,
    laptop,
    dir,
    clientKey: path.join(dir, 'client_key'),
    knownHosts: path.join(dir, 'known_hosts'),
    sshFullBin: cfg.fullBin,
    sshBareBin: cfg.bareBin,
    ...sshdControl(remote, sshd, path.join(dir, 'sshd_config')),
    run,
    pids: nsPids,
    async listening(ns, port) {
      const r = await run(ns, 'ss', ['-Hltn'], { timeoutMs: STEP_TIMEOUT_MS });
      // Columns: State Recv-Q Send-Q Local:Port Peer:Port; any local address on that port counts (127.0.0.1 or [::1]).
      return String(r.stdout)
        .split('\n')
        .some((line) => line.trim().split(/\s+/)[3]?.endsWith(`:${port}`));
    },
    async configureSshd(lines) {
      await lab.stopSshd();
      writeSshdConfig(dir, lines);
      await lab.startSshd();
    },
    async teardown() {
      await lab.stopSshd();
      await removeNamespaces([remote, laptop], dir);
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

/** `agyctl connect` to the lab's remote with the lab's key and known_hosts given as ssh options (the bare ssh config). */
export function connectArgs(lab: SshLab, remoteCommand: string, extra: string[] = [], timeout = '30s'): string[] {
  return [
    'connect',
    DEST,
    '--remote-agyctl',
    remoteCommand,
    '--ssh-option',
    `IdentityFile=${lab.clientKey}`,
    '--ssh-option',
    `UserKnownHostsFile=${lab.knownHosts}`,
    '--timeout',
    timeout,
    ...extra,
  ];
}

/** Wait (bounded) until no process is left in the laptop namespace and none but sshd in the remote one. */
export async function labSettled(lab: SshLab, timeoutMs: number): Promise<void> {
  await until(
    'no process left in the laptop namespace',
    timeoutMs,
    async () => (await lab.pids(lab.laptop)).length === 0,
    LAB_POLL_MS,
  );
  const sshd = lab.sshdPid();
  await until(
    'no process but sshd left in the remote namespace',
    timeoutMs,
    async () => (await lab.pids(lab.remote)).every((pid) => pid === sshd),
    LAB_POLL_MS,
  );
}

/** The lab, or a failure naming why namespaces cannot be created here. */
export function requireLab(result: LabResult | undefined, ctx?: unknown): SshLab {
  return requireLabOf('SSH lab', result, ctx);
}

/**
 * The lab for one test file: created before its tests, torn down after them;
 * every child a test tracks is killed (with its group) after each test, before
 * the test's sandboxes are removed (makeSandbox).
 */
export interface LabFixture {
  /** The lab, or why it could not be made (pass to requireLab). */
  result(): LabResult | undefined;
  track<T extends ResultPromise>(child: T): T;
}

export function useSshLab(): LabFixture {
  let labResult: LabResult | undefined;
  const children = new Set<ResultPromise>();
  beforeAll(async () => {
    labResult = await createSshLab();
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
