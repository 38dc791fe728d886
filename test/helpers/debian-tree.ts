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
 *
 * An arm64 tree (`arch: 'arm64'`, cached as debootstrap-<suite>-<variant>-arm64)
 * is made in two stages: debootstrap --foreign unpacks it here, then its own
 * /debootstrap/debootstrap --second-stage runs inside it under
 * qemu-aarch64-static. Its programs run through binfmt_misc, registered in a
 * user namespace of the run's own (Linux 6.7 and later give each user
 * namespace its own binfmt_misc), so the machine's binfmt_misc is never
 * touched. The namespace maps every uid and gid to itself: files keep their
 * real owners.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';

export const CACHE_ROOT = process.env.AGYCTL_TEST_CACHE ?? '/var/cache/agyctl-test';
const MIRROR = process.env.AGYCTL_TEST_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const BUILD_DEADLINE_MS = 20 * 60_000;
/** The second stage runs every maintainer script under qemu: slower than a native debootstrap. */
const FOREIGN_BUILD_DEADLINE_MS = 40 * 60_000;

export type TreeArch = 'amd64' | 'arm64';

/** Why a Debian tree cannot be made here, or undefined when it can. */
export function debianTreeUnavailable(arch: TreeArch = 'amd64'): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (debootstrap, chroot, mounts)';
  const tools = ['debootstrap', 'unshare', 'chroot', ...(arch === 'arm64' ? ['qemu-aarch64-static'] : [])];
  for (const tool of tools)
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], {
        stdio: 'ignore',
        env: { PATH: `${process.env.PATH}:/usr/sbin:/sbin` },
      });
    } catch {
      return `${tool} is not installed (scripts/test-deps.sh installs debootstrap and qemu-user-static)`;
    }
  return undefined;
}

/** The cached pristine tree for `suite`, made (once) when missing. */
export async function pristineDebianTree(
  suite = 'bookworm',
  variant = 'minbase',
  arch: TreeArch = 'amd64',
): Promise<string> {
  const tree = path.join(CACHE_ROOT, `debootstrap-${suite}-${variant}${arch === 'amd64' ? '' : `-${arch}`}`);
  if (fs.existsSync(path.join(tree, 'etc', 'debian_version'))) return tree;
  fs.mkdirSync(CACHE_ROOT, { recursive: true, mode: 0o755 });
  const lock = `${tree}.lock`;
  const deadline = Date.now() + BUILD_DEADLINE_MS + (arch === 'amd64' ? 0 : FOREIGN_BUILD_DEADLINE_MS);
  while (!tryMkdir(lock)) {
    if (Date.now() > deadline)
      throw new Error(`${lock} is held for too long: another run making the tree died? Remove it.`);
    await new Promise((r) => setTimeout(r, 1_000));
    if (fs.existsSync(path.join(tree, 'etc', 'debian_version'))) return tree;
  }
  try {
    const tmp = `${tree}.partial-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    const foreign = arch === 'amd64' ? [] : [`--arch=${arch}`, '--foreign'];
    await execa('debootstrap', [...foreign, '--variant', variant, suite, tmp, MIRROR], {
      env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin`, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: BUILD_DEADLINE_MS,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (arch !== 'amd64') await secondStage(tmp);
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
  arch: TreeArch;
  /** Where a foreign tree's run mounts its own binfmt_misc. */
  binfmt: string;
}

export function treeView(lower: string, scratch: string, arch: TreeArch = 'amd64'): TreeView {
  const view = {
    lower,
    upper: path.join(scratch, 'upper'),
    work: path.join(scratch, 'work'),
    merged: path.join(scratch, 'merged'),
    arch,
    binfmt: path.join(scratch, 'binfmt'),
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
 * minimal environment (no PATH entry outside the tree) and a deadline (longer
 * for a foreign tree, whose every program runs under qemu).
 */
export async function inTree(view: TreeView, script: string, env: Record<string, string> = {}): Promise<TreeRun> {
  const m = view.merged;
  // In a user namespace overlayfs may not write trusted.* attributes: it keeps its own as user.*.
  const foreign = view.arch !== 'amd64';
  const userxattr = foreign ? ',userxattr' : '';
  const setup = [
    `mount -t overlay overlay -o lowerdir=${view.lower},upperdir=${view.upper},workdir=${view.work}${userxattr} ${m}`,
    // Device nodes on a file system mounted in a user namespace do not open: the machine's /dev is bound in.
    ...(foreign ? [`mount --rbind /dev ${m}/dev`] : []),
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
  if (view.arch !== 'amd64') return inForeignNamespaces(setup, [script], 600_000, view.binfmt);
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

/**
 * qemu-user-static's binfmt_misc entry for aarch64 ELF files (its magic and
 * mask, as /usr/share/binfmts/qemu-aarch64 gives them), with flags F (the
 * interpreter is opened when registered, so it runs inside a chroot) and P.
 */
const QEMU_AARCH64_BINFMT =
  ':qemu-aarch64:M::\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00' +
  ':\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff' +
  ':/usr/bin/qemu-aarch64-static:FP';

const READY = 'agyctl-userns-ready';

/**
 * Runs `setup` (sh -eu, with `args`) in new user, mount and pid namespaces (and
 * `more`, e.g. --net), after mapping every uid and gid of the namespace to
 * itself and registering qemu-aarch64-static in the namespace's own
 * binfmt_misc (mounted at $AGYCTL_BINFMT_DIR). The mapping is written from here
 * once the namespace exists: the script announces it on stderr and waits on
 * stdin.
 */
async function inForeignNamespaces(
  setup: string,
  args: string[],
  timeoutMs: number,
  binfmtDir: string,
  more: string[] = [],
): Promise<TreeRun> {
  fs.mkdirSync(binfmtDir, { recursive: true });
  const script = [
    `echo ${READY} >&2`,
    'read -r _',
    'mount -t binfmt_misc binfmt_misc "$AGYCTL_BINFMT_DIR"',
    'printf %s "$AGYCTL_BINFMT" > "$AGYCTL_BINFMT_DIR/register"',
    setup,
  ].join('\n');
  const child: ResultPromise = execa(
    'unshare',
    ['--user', '--mount', '--pid', '--fork', ...more, '--propagation', 'private', 'sh', '-euc', script, 'sh', ...args],
    {
      reject: false,
      timeout: timeoutMs,
      stdin: 'pipe',
      env: {
        ...process.env,
        PATH: `${process.env.PATH}:/usr/sbin:/sbin`,
        AGYCTL_BINFMT: QEMU_AARCH64_BINFMT,
        AGYCTL_BINFMT_DIR: binfmtDir,
      },
    },
  );
  await announced(child, READY, 60_000);
  for (const map of ['uid_map', 'gid_map']) fs.writeFileSync(`/proc/${child.pid}/${map}`, '0 0 4294967295\n');
  child.stdin?.end('go\n');
  const r = await child;
  const stderr = String(r.stderr).replace(`${READY}\n`, '').replace(READY, '');
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr };
}

/** Resolves once `child` has written `marker` on stderr; rejects when it exits first or after `ms`. */
function announced(child: ResultPromise, marker: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => done(new Error(`unshare did not start within ${ms} ms`)), ms);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (seen.includes(marker)) done();
    };
    const onExit = (): void => done(new Error(`unshare exited before its namespace was ready: ${seen.trim()}`));
    function done(err?: Error): void {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    }
    child.stderr?.on('data', onData);
    child.on('exit', onExit);
  });
}

/** debootstrap's second stage inside a --foreign arm64 tree, under qemu (no network: a namespace of its own). */
export async function secondStage(tree: string): Promise<void> {
  const r = await inForeignNamespaces(
    // container=lxc: debootstrap then does not insist on making device nodes (stage one made them), which
    // a user namespace may not do.
    'exec env container=lxc chroot "$1" /debootstrap/debootstrap --second-stage',
    [tree],
    FOREIGN_BUILD_DEADLINE_MS,
    `${tree}.binfmt`,
    ['--net'],
  );
  fs.rmSync(`${tree}.binfmt`, { recursive: true, force: true });
  if (r.exitCode !== 0) {
    const log = path.join(tree, 'debootstrap', 'debootstrap.log');
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-3000) : '';
    throw new Error(
      `debootstrap --second-stage in ${tree} failed (exit ${r.exitCode}): ${r.stderr.slice(-2000)}\n${tail}`,
    );
  }
}
