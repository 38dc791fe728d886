/**
 * The `release` project's global setup: the release files in release/, built
 * once per run (`node scripts/release.mjs --fast --sign-key <a throwaway key>`:
 * every release file for both architectures, the .debs compressed less) unless release/ already holds an executable, a .deb
 * and SHA256SUMS newer than everything the release script reads, built for
 * HEAD's commit time (the release's SOURCE_DATE_EPOCH) (then
 * a run reuses them, e.g. after `npm run release`, or the previous `npm test`).
 * That is src/ (which it bundles itself), not dist/: `npm test` rewrites
 * dist/ on every run, and a release rebuilt from the same sources is the same.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEB, DEB_ARM64, EXE, EXE_ARM64, RELEASE_DIR, ROOT } from './cli.js';
import { assertFreshBuild } from './fresh-dist.js';

function newest(dir: string): number {
  return fs.readdirSync(dir, { withFileTypes: true }).reduce((latest, e) => {
    const p = path.join(dir, e.name);
    return Math.max(latest, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }, 0);
}

/** What scripts/release.mjs builds the release files from (and dist/, for the npm package: see above). */
const RELEASE_INPUTS = [
  'src',
  'docs',
  'README.md',
  'LICENSE',
  'package.json',
  'package-lock.json',
  'ansible',
  path.join('scripts', 'release.mjs'),
  path.join('scripts', 'man-pages.mjs'),
];

/**
 * The throwaway key the tests' release is signed with (`--sign-key`), made once
 * beside the cached addon; its public half is `${TEST_SIGN_KEY}.pub`.
 */
export const TEST_SIGN_KEY = path.join(ROOT, 'node_modules', '.cache', 'agyctl-release', 'test-sign-key');

function testSignKey(): string {
  if (!fs.existsSync(`${TEST_SIGN_KEY}.pub`)) {
    fs.mkdirSync(path.dirname(TEST_SIGN_KEY), { recursive: true });
    fs.rmSync(TEST_SIGN_KEY, { force: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'throwaway test key', '-f', TEST_SIGN_KEY]);
  }
  return TEST_SIGN_KEY;
}

/** Whether release/SHA256SUMS.sig is the test key's signature (a release signed with another key is rebuilt). */
function signedByTestKey(): boolean {
  const signers = path.join(RELEASE_DIR, '.test-allowed-signers');
  try {
    fs.writeFileSync(signers, `release@agyctl ${fs.readFileSync(`${TEST_SIGN_KEY}.pub`, 'utf8')}`);
    execFileSync(
      'ssh-keygen',
      [
        '-Y',
        'verify',
        '-f',
        signers,
        '-I',
        'release@agyctl',
        '-n',
        'agyctl-release',
        '-s',
        `${RELEASE_DIR}/SHA256SUMS.sig`,
      ],
      { input: fs.readFileSync(path.join(RELEASE_DIR, 'SHA256SUMS')), stdio: ['pipe', 'ignore', 'ignore'] },
    );
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(signers, { force: true });
  }
}

/** The SOURCE_DATE_EPOCH scripts/release.mjs builds with (every file's time in the release): the caller's, else HEAD's time. */
function commitTime(): string {
  return (
    process.env.SOURCE_DATE_EPOCH || execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT }).toString().trim()
  );
}

/** The SOURCE_DATE_EPOCH release/ was built with, as its SBOM records it; undefined without one. */
function builtAt(): string | undefined {
  const sbom = fs.readdirSync(RELEASE_DIR).find((n) => n.endsWith('.cdx.json'));
  if (!sbom) return undefined;
  const doc = JSON.parse(fs.readFileSync(path.join(RELEASE_DIR, sbom), 'utf8')) as {
    metadata?: { timestamp?: string };
  };
  const ms = Date.parse(doc.metadata?.timestamp ?? '');
  return Number.isNaN(ms) ? undefined : String(ms / 1000);
}

/** Why release/ must be rebuilt, or undefined when it is current. */
export function staleRelease(): string | undefined {
  const files = [
    EXE,
    DEB,
    EXE_ARM64,
    DEB_ARM64,
    path.join(RELEASE_DIR, 'SHA256SUMS'),
    path.join(RELEASE_DIR, 'SHA256SUMS.sig'),
  ];
  for (const file of files) if (!fs.existsSync(file)) return `${path.relative(ROOT, file)} is missing`;
  if (!signedByTestKey()) return "SHA256SUMS.sig is not the test key's signature";
  const epoch = builtAt();
  if (epoch !== commitTime()) return `release/ was built for another commit (SOURCE_DATE_EPOCH ${epoch})`;
  const built = Math.min(...files.map((f) => fs.statSync(f).mtimeMs));
  const inputs = Math.max(
    ...RELEASE_INPUTS.map((rel) => {
      const p = path.join(ROOT, rel);
      return fs.statSync(p).isDirectory() ? newest(p) : fs.statSync(p).mtimeMs;
    }),
  );
  return built < inputs ? `${RELEASE_INPUTS.join(', ')} changed after release/ was built` : undefined;
}

export default function setup(): void {
  assertFreshBuild();
  const stale = staleRelease();
  if (!stale) return;
  process.stderr.write(`release project: building release/ (${stale})\n`);
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'release.mjs'), '--fast', '--sign-key', testSignKey()], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    // The first build compiles the SQLite addon for arm64 with a cross compiler: 15 minutes on a loaded
    // two-core machine (docs/test-suite.md); it is cached afterwards.
    timeout: 45 * 60_000,
  });
}
