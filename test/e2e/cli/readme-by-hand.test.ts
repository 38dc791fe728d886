/**
 * The README's "Try it by hand" steps, run as written with bash, from the
 * installed package: the checkout is packed (`npm pack`; the e2e project
 * already has a fresh dist/), and the steps run in the directory holding the
 * tarball, with a clean environment. Each step must exit 0; the login must
 * end proven, and the backup, its proof and the export must carry the
 * seeded conversations' history.
 *
 * Only the environment speeds the install up: npm's own cache, and
 * better-sqlite3's binary from this checkout as a local prebuild (what
 * prebuild-install would otherwise compile for minutes).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';

let tmp: string;
let packDir: string;
let prebuilds: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-readme-'));
  packDir = path.join(tmp, 'release');
  prebuilds = path.join(tmp, 'prebuilds');
  fs.mkdirSync(packDir);
  fs.mkdirSync(prebuilds);
  await execa('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir], {
    cwd: ROOT,
    env: { npm_config_update_notifier: 'false' },
  });
  const sqlite = path.join(ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(fs.readFileSync(path.join(sqlite, 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await execa('tar', ['-czf', path.join(prebuilds, name), '-C', sqlite, 'build/Release/better_sqlite3.node']);
}, 120_000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function pick(names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n]!]] : [])));
}

function steps(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Try it by hand'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no sh block under "## Try it by hand"');
  return block;
}

describe('README: try it by hand', () => {
  it('the steps work as written, from the installed tarball', async () => {
    const script = steps();
    expect(script).toContain('npm install -g ./agyctl-*.tgz');
    expect(script).toContain('agyctl login finish');
    expect(script).toMatch(/^agyctl version\b/m);
    // mktemp in the steps makes the throwaway HOME under TMPDIR: keep it where the test can remove it.
    const r = await execa('bash', ['-euo', 'pipefail', '-c', `${script}\necho "HOME=$HOME"`], {
      cwd: packDir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        TMPDIR: tmp,
        LANG: 'C.UTF-8',
        npm_config_cache: path.join(os.homedir(), '.npm'),
        npm_config_better_sqlite3_local_prebuilds: prebuilds,
        npm_config_update_notifier: 'false',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        // The machine's certificate setup, so npm reaches its registry as it does outside the test.
        ...pick(['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY']),
      },
      extendEnv: false,
      reject: false,
      timeout: 400_000,
    });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const home = /^HOME=(.*)$/m.exec(r.stdout)?.[1];
    expect(home?.startsWith(tmp)).toBe(true);
    // The agyctl that ran is the installed one, not the checkout.
    expect(fs.existsSync(path.join(home!, '.local', 'lib', 'node_modules', 'agyctl', 'bin', 'agyctl.js'))).toBe(true);
    // npm built the SQLite binding, and `agyctl version` says where it is.
    expect(r.stdout).toMatch(/^binding \/.*better_sqlite3\.node$/m);
    expect(r.stdout).toContain('proven in a fresh server');
    expect(r.stdout).toMatch(/status: ok/);
    // The backup's proof loaded three conversations with history, recorded them, then compared with the record.
    expect(r.stdout).toMatch(/proved: a fresh server loaded 3\/3 session\(s\)/);
    expect(r.stdout).toMatch(/replay recorded in .*replay\.json \(3 session\(s\)\)/);
    expect(r.stdout.match(/identical to the recorded replay/g)).toHaveLength(3);
    expect(r.stdout).not.toMatch(/FAILED|NOT proved/);
    const transcripts = fs.readdirSync(path.join(home!, 'transcripts'));
    expect(transcripts.filter((f) => f.endsWith('.md'))).toHaveLength(3);
    const text = transcripts.map((f) => fs.readFileSync(path.join(home!, 'transcripts', f), 'utf8')).join('\n');
    expect(text).toContain('PLAN ACCEPTED.');
    expect(text).toContain('SIM ECHO: Fix the day-of-week field');
    // Leave no pending login or supervisor behind.
    await execa('bash', ['-c', 'agyctl login cancel || true'], {
      env: {
        PATH: `${home}/.local/bin:${process.env.PATH}`,
        HOME: home,
        AGYCTL_SERVER: path.join(home!, '.local', 'lib', 'node_modules', 'agyctl', 'scripts', 'agy-acp-sim'),
      },
      extendEnv: false,
      reject: false,
    });
  }, 420_000);
});
