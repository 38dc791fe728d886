/**
 * Release files for the role's install tests, as `npm run release` lays them
 * out: agyctl_<v>_amd64.deb, agyctl-<v>-linux-x64 and SHA256SUMS in one
 * directory. The real ones are used when release/ (or AGYCTL_RELEASE_DIR)
 * holds them for package.json's version. Otherwise stand-ins are built that
 * keep the release's promise (nothing needed on the box, Node included):
 * the built agyctl with its production node_modules and the Node that runs
 * these tests, under /usr/lib/agyctl in the .deb, and as a self-extracting
 * single file (into $TMPDIR, content-addressed) for the executable. They
 * answer `agyctl version` by loading and querying the SQLite binding, as
 * the release's command does.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { BIN, ROOT } from './cli.js';

export interface ReleaseFiles {
  dir: string;
  version: string;
  deb: string;
  binary: string;
  /** True when these are stand-ins built here, not `npm run release` output. */
  standIn: boolean;
  /** In the stand-in's install, the binding file (breaking it breaks `agyctl version`). */
  standInBinding?: string;
}

export const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;
const debName = (v: string): string => `agyctl_${v}_amd64.deb`;
const binName = (v: string): string => `agyctl-${v}-linux-x64`;

export function writeSums(dir: string, names: string[]): void {
  const lines = names.map(
    (n) =>
      `${createHash('sha256')
        .update(fs.readFileSync(path.join(dir, n)))
        .digest('hex')}  ${n}`,
  );
  fs.writeFileSync(path.join(dir, 'SHA256SUMS'), `${lines.join('\n')}\n`);
}

function realRelease(): ReleaseFiles | undefined {
  const dir = process.env.AGYCTL_RELEASE_DIR ?? path.join(ROOT, 'release');
  const files = ['SHA256SUMS', debName(VERSION), binName(VERSION)];
  if (!files.every((f) => fs.existsSync(path.join(dir, f)))) return undefined;
  return filesIn(dir);
}

const filesIn = (dir: string, standInBinding?: string): ReleaseFiles => ({
  dir,
  version: VERSION,
  deb: path.join(dir, debName(VERSION)),
  binary: path.join(dir, binName(VERSION)),
  standIn: standInBinding !== undefined,
  standInBinding,
});

/** The top-level directories of the production dependency tree (npm's own answer). */
async function productionPackages(): Promise<string[]> {
  const r = await execa('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, reject: false });
  const modules = path.join(ROOT, 'node_modules') + path.sep;
  return [...new Set(String(r.stdout).split('\n'))].filter((p) => {
    if (!p.startsWith(modules)) return false;
    const rest = p.slice(modules.length).split(path.sep);
    return rest.length === (rest[0]!.startsWith('@') ? 2 : 1);
  });
}

/**
 * agyctl as a user other than the checkout's owner can run it: bin/, dist/, package.json, the simulator's launcher
 * and the production dependencies, copied to `app` (a checkout in a 0700 directory such as /root is unreadable to them).
 */
export async function copyApp(app: string): Promise<void> {
  for (const part of ['bin', 'dist', 'package.json', 'scripts/agy-acp-sim'])
    fs.cpSync(path.join(ROOT, part), path.join(app, part), { recursive: true });
  for (const pkg of await productionPackages())
    fs.cpSync(pkg, path.join(app, path.relative(ROOT, pkg)), { recursive: true, dereference: true });
}

const VERSION_JS = `
const Database = require(process.argv[2]);
try {
  const db = new Database(':memory:');
  const sqlite = db.prepare('select sqlite_version() as v').get().v;
  console.log('agyctl __VERSION__ (stand-in)\\nnode ' + process.version + '\\nsqlite ' + sqlite);
} catch (err) {
  console.error('error: cannot load the SQLite binding (' + String(err.message).split('\\n')[0] + ')\\nhint: reinstall agyctl');
  process.exit(1);
}`;

/** /usr/lib/agyctl inside `root`: the Node binary, agyctl's files and its production dependencies. */
async function writeBundle(root: string): Promise<void> {
  const lib = path.join(root, 'usr', 'lib', 'agyctl');
  const app = path.join(lib, 'app');
  fs.mkdirSync(app, { recursive: true });
  fs.copyFileSync(process.execPath, path.join(lib, 'node'));
  fs.chmodSync(path.join(lib, 'node'), 0o755);
  await copyApp(app);
  fs.writeFileSync(path.join(lib, 'version.cjs'), VERSION_JS.replace('__VERSION__', VERSION));
  fs.writeFileSync(
    path.join(lib, 'agyctl'),
    [
      '#!/bin/sh',
      'here=$(dirname "$(readlink -f "$0")")',
      `[ "$1" = version ] && exec "$here/node" "$here/version.cjs" "$here/app/node_modules/better-sqlite3"`,
      `exec "$here/node" "$here/app/${path.relative(ROOT, BIN)}" "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
}

async function buildDeb(work: string, out: string): Promise<void> {
  const pkg = path.join(work, 'deb');
  await writeBundle(pkg);
  fs.mkdirSync(path.join(pkg, 'usr', 'bin'), { recursive: true });
  fs.symlinkSync('../lib/agyctl/agyctl', path.join(pkg, 'usr', 'bin', 'agyctl'));
  fs.mkdirSync(path.join(pkg, 'DEBIAN'));
  fs.writeFileSync(
    path.join(pkg, 'DEBIAN', 'control'),
    [
      'Package: agyctl',
      `Version: ${VERSION}`,
      'Architecture: amd64',
      'Maintainer: agyctl tests <tests@agyctl.invalid>',
      'Depends: libc6, libstdc++6, libgcc-s1',
      'Description: agyctl (a test stand-in for the release .deb)',
      '',
    ].join('\n'),
  );
  const r = await execa('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z1', '--build', pkg, out], { reject: false });
  if (r.exitCode !== 0) throw new Error(`dpkg-deb failed: ${String(r.stderr)}`);
}

/** One file: a shell header that unpacks the tar after it into $TMPDIR once, then runs it. */
async function buildSelfExtracting(work: string, out: string): Promise<void> {
  const tree = path.join(work, 'exe');
  await writeBundle(tree);
  const tar = path.join(work, 'exe.tar');
  const r = await execa('tar', ['-C', path.join(tree, 'usr', 'lib', 'agyctl'), '-cf', tar, '.'], { reject: false });
  if (r.exitCode !== 0) throw new Error(`tar failed: ${String(r.stderr)}`);
  const sum = createHash('sha256').update(fs.readFileSync(tar)).digest('hex').slice(0, 16);
  const header = (offset: number): string =>
    [
      '#!/bin/sh',
      'set -e',
      // Per user: a directory another user unpacked (0700, from mktemp) is not ours to run.
      `dir="\${TMPDIR:-/tmp}/agyctl-$(id -u)-${sum}"`,
      'if [ ! -x "$dir/agyctl" ]; then',
      '  tmp=$(mktemp -d "${TMPDIR:-/tmp}/agyctl-unpack.XXXXXX")',
      `  tail -c +${String(offset).padStart(10, '0')} "$0" | tar -x -C "$tmp"`,
      '  mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"',
      'fi',
      'exec "$dir/agyctl" "$@"',
      '',
    ].join('\n');
  const offset = Buffer.byteLength(header(0)) + 1;
  fs.writeFileSync(out, header(offset), { mode: 0o755 });
  fs.appendFileSync(out, fs.readFileSync(tar));
}

/** The release files in `work` (built there when they are stand-ins). */
export async function releaseFiles(work: string): Promise<ReleaseFiles> {
  const real = realRelease();
  if (real) return real;
  const dir = path.join(work, 'release');
  fs.mkdirSync(dir, { recursive: true });
  await buildDeb(work, path.join(dir, debName(VERSION)));
  await buildSelfExtracting(work, path.join(dir, binName(VERSION)));
  writeSums(dir, [debName(VERSION), binName(VERSION)]);
  return filesIn(dir, '/usr/lib/agyctl/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node');
}

/**
 * The release executable with its embedded SQLite addon damaged: the last ELF shared object inside it (the
 * addon, after Node's own image) loses its magic, so `--version` still answers and loading the binding fails.
 */
export function withBrokenBinding(exe: Buffer): Buffer {
  const magic = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);
  const at = exe.lastIndexOf(magic);
  const ET_DYN = 3;
  if (at <= 0 || exe[at + 16] !== ET_DYN) throw new Error('no embedded shared object found in the executable');
  const broken = Buffer.from(exe);
  broken[at + 1] = 0x58;
  return broken;
}
