/**
 * docs/check.md's CI examples, run as written against the simulator: the
 * GitHub Actions step's `run:` lines and the GitLab job's `script:` lines
 * under `bash -eo pipefail` (what those CI systems run), and the crontab's
 * line under cron's own environment (`env -i` with HOME, LOGNAME, SHELL and
 * PATH=/usr/bin:/bin, then the crontab's variables) with agyctl and the
 * server installed in /usr/local/bin, as the single executable is (a private
 * mount namespace puts them there for this test only). Each prints the
 * findings and fails on a box that is not logged in, and passes on one that is.
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, ROOT, type Sandbox, simPath } from '../../helpers/cli.js';
import { authedSandbox } from '../../helpers/sim-conversations.js';

const DOC = fs.readFileSync(path.join(ROOT, 'docs', 'check.md'), 'utf8');
const SECTION = DOC.slice(DOC.indexOf('## In CI'), DOC.indexOf('## Prometheus metrics'));

/** The fenced blocks of the "In CI" section, in order, with their language. */
function blocks(lang: string): string[] {
  return [...SECTION.matchAll(/```(\w+)\n([\s\S]*?)```/g)].filter((m) => m[1] === lang).map((m) => m[2]!);
}

/** The GitHub Actions step's `run: |` body, dedented. */
function githubRun(): string {
  const yaml = blocks('yaml').find((b) => b.includes('runs-on:'));
  if (!yaml) throw new Error('docs/check.md has no GitHub Actions example');
  const lines = yaml.split('\n');
  const at = lines.findIndex((l) => /^\s+run: \|$/.test(l));
  const indent = /^\s*/.exec(lines[at + 1]!)![0];
  const body: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (line.trim() !== '' && !line.startsWith(indent)) break;
    body.push(line.slice(indent.length));
  }
  return body.join('\n');
}

/** The GitLab job's `script:` items, one command each, as the runner runs them in one shell. */
function gitlabScript(): string {
  const yaml = blocks('yaml').find((b) => b.includes('script:'));
  if (!yaml) throw new Error('docs/check.md has no GitLab CI example');
  const after = yaml.slice(yaml.indexOf('script:'));
  return [...after.matchAll(/^\s+- (.*)$/gm)].map((m) => m[1]!).join('\n');
}

/** The crontab's variable lines, and its one job's command. */
function crontab(): { vars: Record<string, string>; command: string } {
  const [text] = blocks('crontab');
  if (!text) throw new Error('docs/check.md has no crontab example');
  const vars: Record<string, string> = {};
  let command = '';
  for (const line of text.split('\n')) {
    const v = /^([A-Z_]+)=(.*)$/.exec(line);
    if (v) vars[v[1]!] = v[2]!;
    const job = /^(?:\S+\s+){5}(.*)$/.exec(line);
    if (!v && job) command = job[1]!;
  }
  return { vars, command };
}

/** A box: settings and a token the simulator accepts (or none), agyctl and the server in `bin`. */
function box(loggedIn: boolean): { sb: Sandbox; bin: string } {
  const sb = authedSandbox();
  if (!loggedIn) fs.rmSync(path.join(sb.stateDir, 'acp_token.json'));
  const bin = path.join(sb.root, 'bin');
  fs.mkdirSync(bin);
  const argv = AGYCTL_ARGV.map((a) => (a === 'node' ? process.execPath : a));
  fs.writeFileSync(path.join(bin, 'agyctl'), `#!/bin/sh\nexec ${argv.join(' ')} "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'agy_acp_server'), `#!/bin/sh\nexec ${process.execPath} ${simPath()} "$@"\n`, {
    mode: 0o755,
  });
  fs.chmodSync(sb.root, 0o755);
  return { sb, bin };
}

async function ciShell(script: string, b: { sb: Sandbox; bin: string }) {
  return execa('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
    env: { PATH: `${b.bin}:/usr/bin:/bin`, HOME: b.sb.home, TMPDIR: b.sb.root, LANG: 'C.UTF-8' },
    extendEnv: false,
    reject: false,
    all: true,
    timeout: 60_000,
  });
}

describe('docs/check.md: the CI examples work as written', () => {
  it('GitHub Actions: a box that is not logged in fails the step with the findings and the fix', async () => {
    const script = githubRun();
    expect(script).toContain('agyctl check --live');
    const r = await ciShell(script, box(false));
    expect(r.exitCode, r.all).toBe(3);
    expect(r.all).toContain('::error::log in again on the box: agyctl login');
    expect(r.all).toMatch(/✗ token-file/);
  });

  it('GitHub Actions: a logged-in box passes', async () => {
    const r = await ciShell(githubRun(), box(true));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('credentials healthy');
  });

  it('GitLab CI: the job fails with the findings in its log, and passes once logged in', async () => {
    const script = gitlabScript();
    expect(script).toBe('agyctl check --live');
    const bad = await ciShell(script, box(false));
    expect(bad.exitCode, bad.all).toBe(3);
    expect(bad.all).toMatch(/✗ token-file/);
    const good = await ciShell(script, box(true));
    expect(good.exitCode, good.all).toBe(0);
  });

  /** The job's command as cron runs it, with agyctl and the server in /usr/local/bin (a private mount). */
  async function cron(command: string, vars: Record<string, string>, b: { sb: Sandbox; bin: string }) {
    const env = { HOME: b.sb.home, LOGNAME: 'root', SHELL: '/bin/sh', PATH: '/usr/bin:/bin', ...vars };
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    const inner = `mount --bind "$1" /usr/local/bin && exec env -i ${assignments.map((a) => `'${a}'`).join(' ')} /bin/sh -c "$2"`;
    return execa('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', inner, 'cron', b.bin, command], {
      reject: false,
      all: true,
      timeout: 60_000,
    });
  }

  it('cron: silent while healthy, the findings (mailed by cron) when not, with /usr/local/bin off cron PATH', async () => {
    const { vars, command } = crontab();
    expect(command).toContain('agyctl check --live');
    expect(command).not.toMatch(/%/); // cron turns % into a newline
    const healthy = await cron(command, vars, box(true));
    expect(healthy.exitCode, healthy.all).toBe(0);
    expect(healthy.all).toBe('');
    const b = box(false);
    const failing = await cron(command, vars, b);
    expect(failing.all).toMatch(/✗ token-file/);
    expect(failing.all).toContain('agyctl login');
    // Without the crontab's PATH line, cron's own PATH finds neither agyctl nor the server in /usr/local/bin.
    const bare = await cron(command, {}, b);
    expect(bare.all).toMatch(/agyctl: not found/);
  });
});
