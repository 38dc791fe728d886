/**
 * A Debian 12 box with a real systemd as PID 1, for the fleet tests: a
 * debootstrap tree (systemd, systemd-sysv, dbus, openssh-server, python3 for
 * Ansible, Debian's prometheus-node-exporter; no Node) built once and cached
 * under /var/cache/agyctl-test/, booted with
 * `systemd-nspawn --boot --register=no --keep-unit
 * --console=passive` inside a network namespace of the fleet lab, so its
 * sshd and node_exporter listen on that lab host's address and it has no
 * route anywhere else. Commands run inside through `nsenter` on the
 * container's init. nsenter --net is used rather than `ip netns exec`, which
 * remounts /sys and hides the cgroup hierarchies nspawn needs.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa, type Result, type ResultPromise } from 'execa';
import { which } from './ns-lab.js';
import { until } from './until.js';

const CACHE = '/var/cache/agyctl-test';
const MIRROR = 'http://deb.debian.org/debian';
const PACKAGES = [
  'systemd',
  'systemd-sysv',
  'dbus',
  'openssh-server',
  'python3',
  // ansible/README.md's inventory logs in as the service user and becomes root with sudo.
  'sudo',
  'prometheus-node-exporter',
  'iproute2',
];
const DEBOOTSTRAP_MS = 900_000;
const BOOT_MS = 60_000;
const STOP_MS = 30_000;
/** Between two looks into the box (a process listing, `systemctl` through nsenter). */
const PROBE_EVERY_MS = 100;

export type TreeResult = { tree: string; unavailable?: undefined } | { tree?: undefined; unavailable: string };

/** The cached tree, built when missing (minutes, once per machine); why not when it cannot be. */
export async function debianSystemdTree(): Promise<TreeResult> {
  if (process.getuid?.() !== 0) return { unavailable: 'debootstrap and systemd-nspawn need root (CI runs as root)' };
  for (const tool of ['debootstrap', 'systemd-nspawn', 'nsenter'])
    if (!which(tool, ['/usr/sbin', '/sbin']))
      throw new Error(`${tool} is not installed; .ci/run installs it: apt-get install debootstrap systemd-container`);
  const tag = createHash('sha256').update(PACKAGES.join(',')).digest('hex').slice(0, 12);
  const tree = path.join(CACHE, `bookworm-systemd-${tag}`);
  if (fs.existsSync(path.join(tree, 'usr', 'lib', 'systemd', 'systemd'))) return { tree };
  fs.mkdirSync(CACHE, { recursive: true, mode: 0o755 });
  const tmp = path.join(CACHE, `.bookworm-systemd-${tag}.${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  const r = await execa(
    'debootstrap',
    ['--variant=minbase', `--include=${PACKAGES.join(',')}`, 'bookworm', tmp, MIRROR],
    { reject: false, timeout: DEBOOTSTRAP_MS, stdin: 'ignore', all: true },
  );
  if (r.exitCode !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(`debootstrap of ${tree} failed (exit ${r.exitCode}): ${String(r.all).slice(-2000)}`);
  }
  try {
    fs.renameSync(tmp, tree);
  } catch (err) {
    // Another worker finished first: its tree is as good as ours.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(tree)) throw err;
  }
  return { tree };
}

export interface SystemdBox {
  /** The container's init (systemd), as the host sees it. */
  pid: number;
  /** The container's root file system, reached from the host. */
  root: string;
  /** A command inside the box (all its namespaces), as root. */
  exec(argv: string[], options?: { timeoutMs?: number; input?: string }): Promise<Result>;
  stop(): Promise<void>;
}

export interface BootOptions {
  tree: string;
  /** The network namespace (by name, /run/netns/<name>) the box lives in. */
  netns: string;
  name: string;
  /** Where the box's copy of the tree goes (removed when the box stops; put it where the test's cleanup reaches). */
  dir: string;
  /** Host files bound read-only into the box: [host path, path in the box]. */
  bindRo?: Array<[string, string]>;
}

function childPids(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Boots a copy of the tree and waits for systemd to finish starting. A copy of our own rather than nspawn's
 * --ephemeral, whose snapshot is left behind when nspawn has to be killed.
 */
export async function bootSystemdBox(options: BootOptions): Promise<SystemdBox> {
  const copied = await execa('cp', ['-a', '--reflink=auto', options.tree, options.dir], { reject: false });
  if (copied.exitCode !== 0) throw new Error(`copying ${options.tree}: ${String(copied.stderr)}`);
  // nspawn mounts the box's root itself: remounting it per /etc/fstab has nothing to do in a container, and when
  // it fails (it can, with other boxes booting beside it) the box is "degraded" for nothing.
  fs.symlinkSync('/dev/null', path.join(options.dir, 'etc', 'systemd', 'system', 'systemd-remount-fs.service'));
  const binds = (options.bindRo ?? []).map(([from, to]) => `--bind-ro=${from}:${to}`);
  const nspawn: ResultPromise = execa(
    'nsenter',
    [
      `--net=/run/netns/${options.netns}`,
      'systemd-nspawn',
      '-D',
      options.dir,
      '--boot',
      '--register=no',
      '--keep-unit',
      '--console=passive',
      `--machine=${options.name}`,
      ...binds,
    ],
    { reject: false, stdin: 'ignore', all: true },
  );
  let ended = false;
  void nspawn.then(() => {
    ended = true;
  });
  const pid = await until(
    'systemd-nspawn to start the container',
    BOOT_MS,
    async () => {
      if (ended) throw new Error(`systemd-nspawn ended: ${String((await nspawn).all)}`);
      const spawner = nspawn.pid === undefined ? [] : childPids(nspawn.pid);
      for (const p of spawner.flatMap((s) => [s, ...childPids(s)])) {
        try {
          if (fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'systemd') return p;
        } catch {
          /* gone */
        }
      }
      return undefined;
    },
    PROBE_EVERY_MS,
  );
  const exec: SystemdBox['exec'] = (argv, o = {}) =>
    execa('nsenter', ['-t', String(pid), '-m', '-u', '-i', '-n', '-p', '--', ...argv], {
      reject: false,
      timeout: o.timeoutMs ?? 60_000,
      input: o.input,
      stdin: o.input === undefined ? 'ignore' : 'pipe',
      all: true,
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
      extendEnv: false,
    });
  const stop = async (): Promise<void> => {
    if (!ended) {
      // nspawn asks the box's systemd to shut down; a box that takes too long is killed.
      nspawn.kill('SIGTERM');
      const t = setTimeout(() => nspawn.kill('SIGKILL'), STOP_MS);
      await nspawn;
      clearTimeout(t);
    }
    fs.rmSync(options.dir, { recursive: true, force: true });
  };
  try {
    await until(
      'systemd in the box to finish starting',
      BOOT_MS,
      async () => {
        const r = await exec(['systemctl', 'is-system-running'], { timeoutMs: 10_000 });
        const state = String(r.stdout).trim();
        if (state === 'running') return true;
        if (state === 'degraded') {
          const failed = await exec(['systemctl', '--no-pager', '--failed']);
          const journal = await exec(['journalctl', '--no-pager', '-p', 'warning', '-n', '40']);
          throw new Error(`systemd in the box is degraded:\n${String(failed.all)}\n${String(journal.all)}`);
        }
        return undefined;
      },
      PROBE_EVERY_MS,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid, root: `/proc/${pid}/root`, exec, stop };
}
