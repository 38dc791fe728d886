/**
 * The README's test command on a fresh Debian 12 machine: `npm test` first runs
 * scripts/test-deps.sh (package.json `pretest`), which installs the Debian
 * packages the suite needs as root, or names every missing one in one line and
 * stops the suite before anything runs. .ci/run runs that same command and
 * keeps no list of its own. No test skips itself at run time: a lab or tool
 * that is missing is a failure that names it.
 * @module-tag root
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';
import { requireLabOf } from '../../helpers/ns-lab.js';

const SCRIPT = path.join(ROOT, 'scripts', 'test-deps.sh');
const NOBODY = 65534;

/** The tools other parts of the suite run, by Debian package (the release, load and terminal tests among them). */
const MUST_LIST = [
  'openssh-server',
  'iproute2',
  'restic',
  'zsh',
  'fish',
  'zbar-tools',
  'systemd-container',
  'debootstrap',
  'lintian',
  'man-db',
  'qemu-user-static',
  'binfmt-support',
  'diffoscope-minimal',
  'stress-ng',
  'g++-aarch64-linux-gnu',
  'tmux',
  'rclone',
];

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-test-deps-'));
  fs.chmodSync(tmp, 0o755);
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function listed(): Promise<string[]> {
  const r = await execa('bash', [SCRIPT, '--list']);
  return r.stdout.split('\n');
}

describe('the README test command installs or names what the suite needs', () => {
  it('npm test runs scripts/test-deps.sh first, and .ci/run runs the README command with no list of its own', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.pretest).toBe('bash scripts/test-deps.sh');
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/^npm ci && npm test\b/m);
    const ci = fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
    const commands = ci.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(commands.at(-1)).toBe('npm ci && npm test');
    expect(ci).not.toMatch(/apt-get|need\+=/);
  });

  it("the README's quick start is two commands: the demo (run by demo-output.test) and this suite", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.split(/^## /m).find((s) => s.startsWith('Quick start'));
    const block = /```sh\n([\s\S]*?)```/.exec(section ?? '')?.[1] ?? '';
    const commands = block
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean);
    expect(commands).toEqual(['npm ci && npm run demo', 'npm ci && npm test']);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.demo).toBe('npm run build && node scripts/demo.mjs');
  });

  it('lists every package the suite uses', async () => {
    expect(await listed()).toEqual(expect.arrayContaining(MUST_LIST));
  });

  it('without root, names every missing package in one line and fails before anything runs', async () => {
    const script = path.join(tmp, 'test-deps.sh');
    fs.copyFileSync(SCRIPT, script);
    fs.chmodSync(script, 0o755);
    // A machine with none of the tools: nothing on PATH (the script adds only /usr/sbin and /sbin).
    const r = await execa(
      '/usr/bin/setpriv',
      [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '/bin/bash', script],
      { env: { PATH: path.join(tmp, 'empty') }, extendEnv: false, reject: false, cwd: tmp },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^test-deps: the suite needs these Debian packages, missing here: .*; as root: apt-get install -y /,
    );
    for (const pkg of ['zsh', 'fish', 'restic', 'tmux', 'rclone', 'stress-ng', 'qemu-user-static', 'lintian'])
      expect(lines[0]).toContain(` ${pkg}`);
  });

  it('as root, installs what is missing with apt-get, and fails naming what apt-get did not bring', async () => {
    const bin = path.join(tmp, 'bin');
    const log = path.join(tmp, 'apt-get.log');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'apt-get'), `#!/bin/sh\necho "$*" >> ${log}\n`, { mode: 0o755 });
    const r = await execa('/bin/bash', [SCRIPT], { env: { PATH: bin }, extendEnv: false, reject: false });
    const calls = fs.readFileSync(log, 'utf8').trim().split('\n');
    expect(calls[0]).toBe('update -qq');
    expect(calls[1]).toMatch(/^install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=900 /);
    for (const pkg of ['zsh', 'tmux', 'rclone', 'chromium']) expect(calls[1]!.split(' ')).toContain(pkg);
    // The stub installed nothing: the script says so instead of letting the suite fail test by test.
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^test-deps: still missing after apt-get install: .*\btmux\b/m);
  });
});

describe('no test skips itself at run time', () => {
  it('a lab that cannot be made here is a failure naming why', () => {
    expect(() => requireLabOf('SSH lab', { unavailable: 'creating network namespaces needs root' })).toThrow(
      /the SSH lab cannot run here: creating network namespaces needs root/,
    );
  });

  it('no test file or helper calls a run-time skip', () => {
    const offenders: string[] = [];
    const skip = new RegExp(
      ['ctx\\.skip\\(', 'context\\.skip\\(', '\\.skipIf\\(', '\\.runIf\\(', '\\b(it|test|describe)\\.skip\\('].join(
        '|',
      ),
    );
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (/\.(ts|mjs|js)$/.test(entry.name) && p !== fileURLToPath(import.meta.url))
          fs.readFileSync(p, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (skip.test(line)) offenders.push(`${path.relative(ROOT, p)}:${i + 1}: ${line.trim()}`);
            });
      }
    };
    walk(path.join(ROOT, 'test'));
    expect(offenders).toEqual([]);
  });
});
