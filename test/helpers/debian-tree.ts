/**
 * A pristine Debian tree made by debootstrap (minbase: Essential and Required
 * packages, so no Node, no npm, no compiler), cached outside the repo by suite
 * so that CI reruns skip the download: /var/cache/agyctl-test/debootstrap-<suite>-<variant>/.
 * It is made in a temporary directory beside the cache entry and renamed into
 * place when complete; a mkdir lock keeps two runs from making it at once.
 *
 * Tests never change the cached tree: `inTree` runs a shell script in a
 * throwaway copy-on-write view of it (overlayfs over the pristine tree, an
 * upper directory per test) inside new mount and pid namespaces, where /proc
 * is mounted and then everything vanishes with the namespace. Root only.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';

export const CACHE_ROOT = process.env.AGYCTL_TEST_CACHE ?? '/var/cache/agyctl-test';
const MIRROR = process.env.AGYCTL_TEST_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const BUILD_DEADLINE_MS = 20 * 60_000;

/** Why a Debian tree cannot be made here, or undefined when it can. */
export function debianTreeUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (debootstrap, chroot, mounts)';
  for (const tool of ['debootstrap', 'unshare', 'chroot'])
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], {
        stdio: 'ignore',
        env: { PATH: `${process.env.PATH}:/usr/sbin:/sbin` },
      });
    } catch {
      return `${tool} is not installed (.ci/run installs debootstrap)`;
    }
  return undefined;
}

/** The cached pristine tree for `suite`, made (once) when missing. */
export async function pristineDebianTree(suite = 'bookworm', variant = 'minbase'): Promise<string> {
  const tree = path.join(CACHE_ROOT, `debootstrap-${suite}-${variant}`);
  if (fs.existsSync(path.join(tree, 'etc', 'debian_version'))) return tree;
  fs.mkdirSync(CACHE_ROOT, { recursive: true, mode: 0o755 });
  const lock = `${tree}.lock`;
  const deadline = Date.now() + BUILD_DEADLINE_MS;
  while (!tryMkdir(lock)) {
    if (Date.now() > deadline)
      throw new Error(`${lock} is held for too long: another run making the tree died? Remove it.`);
    await new Promise((r) => setTimeout(r, 1_000));
    if (fs.existsSync(path.join(tree, 'etc', 'debian_version'))) return tree;
  }
  try {
    const tmp = `${tree}.partial-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    await execa('debootstrap', ['--variant', variant, suite, tmp, MIRROR], {
      env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin`, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: BUILD_DEADLINE_MS,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // apt's package lists are large and no test uses them: the cache stays small.
    fs.rmSync(path.join(tmp, 'var', 'cache', 'apt', 'archives'), { recursive: true, force: true });
    fs.rmSync(tree, { recursive: true, force: true });
    fs.renameSync(tmp, tree);
    return tree;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function tryMkdir(dir: string): boolean {
  try {
    fs.mkdirSync(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** A test's own writable view of a pristine tree: its changes live in `upper`, the tree stays as it was. */
export interface TreeView {
  lower: string;
  upper: string;
  work: string;
  merged: string;
}

export function treeView(lower: string, scratch: string): TreeView {
  const view = {
    lower,
    upper: path.join(scratch, 'upper'),
    work: path.join(scratch, 'work'),
    merged: path.join(scratch, 'merged'),
  };
  for (const dir of [view.upper, view.work, view.merged]) fs.mkdirSync(dir, { recursive: true });
  return view;
}

export interface TreeRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` (sh) as root inside the view, chrooted, with a fresh /proc, a
 * minimal environment (no PATH entry outside the tree) and a deadline.
 */
export async function inTree(view: TreeView, script: string, env: Record<string, string> = {}): Promise<TreeRun> {
  const m = view.merged;
  const setup = [
    `mount -t overlay overlay -o lowerdir=${view.lower},upperdir=${view.upper},workdir=${view.work} ${m}`,
    `mount -t proc proc ${m}/proc`,
    `mount -t tmpfs tmpfs ${m}/tmp`,
    `exec chroot ${m} /usr/bin/env -i ${Object.entries({
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: '/root',
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
      ...env,
    })
      .map(([k, v]) => `${k}='${v}'`)
      .join(' ')} /bin/sh -euc "$1"`,
  ].join(' && ');
  const r = await execa(
    'unshare',
    ['--mount', '--pid', '--fork', '--propagation', 'private', 'sh', '-euc', setup, 'sh', script],
    {
      reject: false,
      timeout: 120_000,
      env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` },
    },
  );
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}
