/**
 * Where the install is described (README, docs/install.md), the reader is told
 * that `agyctl version` answers whether the SQLite binding exists after
 * `npm install -g` (npm 11 warns about install scripts whether or not it ran
 * them). And it does: an installed package whose binding was never built (its
 * install script did not run) makes `agyctl version` exit 1 naming the fix,
 * not "built for another Node". The npm line of README.md and docs/install.md
 * runs as written (npm's cache and this checkout's binding as a local prebuild
 * keep it offline and fast), followed by `agyctl version`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';
import { copyApp } from '../../helpers/release-artifacts.js';

let app: string;
beforeAll(async () => {
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-unbuilt-'));
  await copyApp(app);
}, 60_000);
afterAll(() => fs.rmSync(app, { recursive: true, force: true }));

const version = (dir: string) =>
  execa(process.execPath, [path.join(dir, 'bin', 'agyctl.js'), 'version'], {
    env: { PATH: '/usr/bin:/bin', HOME: app, LANG: 'C.UTF-8', NO_COLOR: '1' },
    extendEnv: false,
    reject: false,
  });

/** The `npm install -g` line of a doc's sh blocks, as written. */
function npmLine(doc: string): string {
  const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
  const line = [...text.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => m[1]!.split('\n'))
    .find((l) => l.startsWith('npm install -g '));
  if (!line) throw new Error(`${doc} has no npm install -g line`);
  return line;
}

describe('the npm install line, as written, then agyctl version', () => {
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-npm-line-'));
    await execa('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], {
      cwd: ROOT,
      env: { npm_config_update_notifier: 'false' },
    });
    const sqlite = path.join(ROOT, 'node_modules', 'better-sqlite3');
    const { version: v } = JSON.parse(fs.readFileSync(path.join(sqlite, 'package.json'), 'utf8')) as {
      version: string;
    };
    const name = `better-sqlite3-v${v}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    fs.mkdirSync(path.join(dir, 'prebuilds'));
    await execa('tar', ['-czf', path.join(dir, 'prebuilds', name), '-C', sqlite, 'build/Release/better_sqlite3.node']);
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each(['README.md', 'docs/install.md'])(
    '%s',
    async (doc) => {
      const prefix = fs.mkdtempSync(path.join(dir, 'prefix-'));
      const r = await execa(
        'bash',
        [
          '-euo',
          'pipefail',
          '-c',
          `${npmLine(doc)}
agyctl version`,
        ],
        {
          cwd: dir,
          env: {
            PATH: `${prefix}/bin:${process.env.PATH}`,
            HOME: prefix,
            NPM_CONFIG_PREFIX: prefix,
            npm_config_cache: path.join(os.homedir(), '.npm'),
            npm_config_better_sqlite3_local_prebuilds: path.join(dir, 'prebuilds'),
            npm_config_update_notifier: 'false',
            npm_config_audit: 'false',
            npm_config_fund: 'false',
            ...Object.fromEntries(
              [
                'NODE_EXTRA_CA_CERTS',
                'SSL_CERT_FILE',
                'SSL_CERT_DIR',
                'HTTPS_PROXY',
                'https_proxy',
                'NO_PROXY',
              ].flatMap((n) => (process.env[n] ? [[n, process.env[n]!]] : [])),
            ),
          },
          extendEnv: false,
          reject: false,
          timeout: 300_000,
        },
      );
      expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^binding ${prefix}/lib/node_modules/agyctl/.*better_sqlite3\\.node$`, 'm'));
    },
    320_000,
  );
});

describe('agyctl version answers whether npm built the SQLite binding', () => {
  it.each(['README.md', 'docs/install.md'])('%s says so next to npm install -g', (doc) => {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    const at = text.indexOf('npm install -g --allow-scripts=better-sqlite3');
    expect(at).toBeGreaterThan(-1);
    const near = text.slice(at, at + 1200).replace(/\s+/g, ' ');
    expect(near).toMatch(/npm 11 (may print a )?warn/);
    expect(near).toMatch(/`agyctl version` (tells|does)[^.]*binding/);
  });

  it('with the binding: its path; without it: exit 1 and the fix for a script that did not run', async () => {
    const built = await version(app);
    expect(built.exitCode, built.stderr).toBe(0);
    expect(built.stdout).toMatch(/^binding \/.*better_sqlite3\.node$/m);
    fs.rmSync(path.join(app, 'node_modules', 'better-sqlite3', 'build'), { recursive: true, force: true });
    const unbuilt = await version(app);
    expect(unbuilt.exitCode).toBe(1);
    expect(unbuilt.stderr).toContain('npm did not build better-sqlite3');
    expect(unbuilt.stderr).toContain('npm rebuild -g agyctl');
    expect(unbuilt.stderr).not.toMatch(/another Node|at .*\.js:\d+/);
  });
});
