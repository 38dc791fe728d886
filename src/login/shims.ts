/**
 * A login's private temp dir (agyctl-login-*) and the capture through fake
 * browsers it holds. The 0700 directory holds one executable per program a
 * launcher library might run to open a browser (the lists of the common Go,
 * Rust, Python and Node launchers, plus the browsers by name); each appends
 * one line per run, its name and its arguments, to a log that agyctl
 * watches.
 *
 * The directory (the sign-in URL is inside) goes away on every exit path
 * but SIGKILL: the caller's finally, and the process exit hook. For SIGKILL
 * each dir records its owner (pid and process start time, so a reused pid
 * is not mistaken for the owner); the next login removes dirs that are ours
 * (our uid, our naming, a real directory) whose owner is gone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tempRoot } from '../core/paths.js';
import { holderLine, parseHolderLine } from '../util/os/pid-lock.js';
import { recordedProcessAlive } from '../util/os/process.js';

/** Desktop launchers and helpers: xdg-open and friends, `gio open URL`, `kioclient exec URL`, WSL's wslview. */
export const LAUNCHER_NAMES = [
  'xdg-open',
  'open',
  'gio',
  'gvfs-open',
  'gnome-open',
  'kde-open',
  'kde-open5',
  'kioclient',
  'kioclient5',
  'kfmclient',
  'exo-open',
  'x-www-browser',
  'www-browser',
  'sensible-browser',
  'wslview',
  'cygstart',
] as const;
/** Browsers by name, as Python's webbrowser and Rust's webbrowser try them. */
export const BROWSER_NAMES = [
  'firefox',
  'firefox-esr',
  'iceweasel',
  'mozilla',
  'google-chrome',
  'google-chrome-stable',
  'chrome',
  'chromium',
  'chromium-browser',
  'brave-browser',
  'microsoft-edge',
  'microsoft-edge-stable',
  'opera',
  'vivaldi',
  'epiphany',
  'konqueror',
  'falkon',
  'seamonkey',
  'lynx',
  'w3m',
  'links',
  'elinks',
] as const;
export const SHIM_NAMES = [...LAUNCHER_NAMES, ...BROWSER_NAMES] as const;
export const BROWSER_SHIM = 'agyctl-browser';
const FAKE_DISPLAY = ':0';
/**
 * BROWSER is read as a colon-separated list (Python, Rust), as a command
 * with `%s` (Python), or through `sh -c`: a path made only of these
 * characters means the same under every reading.
 */
const PLAIN_PATH = /^[A-Za-z0-9_./-]+$/;

export interface ShimDir {
  dir: string;
  log: string;
  browser: string;
  remove(): void;
}

const live = new Set<string>();
/** The shim dirs this process has now (a login supervisor records them, so a killed supervisor's dirs can still be removed). */
export const liveShimDirs = (): string[] => [...live];
process.once('exit', () => {
  for (const dir of live) fs.rmSync(dir, { recursive: true, force: true });
});

function shimScript(log: string, name: string): string {
  // One line per run: name, then each argument after a tab, with tabs and line breaks inside an argument
  // turned into spaces; built first and written with one printf so concurrent runs do not interleave.
  const q = `'${log.replace(/'/g, `'\\''`)}'`;
  return [
    '#!/bin/sh',
    `# agyctl login: records what the server tried to open (${name}).`,
    `line='${name}'`,
    `for a in "$@"; do line="$line$(printf '\\t')$(printf '%s' "$a" | tr '\\t\\n\\r' '   ')"; done`,
    `printf '%s\\n' "$line" >> ${q}`,
    'exit 0',
    '',
  ].join('\n');
}

/** Where the shim directory goes: TMPDIR unless its path would not survive BROWSER's readings, then the system's. */
export function shimParent(env: NodeJS.ProcessEnv): string {
  for (const candidate of [tempRoot(env), os.tmpdir(), '/tmp']) {
    if (!PLAIN_PATH.test(candidate)) continue;
    try {
      fs.accessSync(candidate, fs.constants.W_OK | fs.constants.X_OK);
      return candidate;
    } catch {
      /* try the next */
    }
  }
  return tempRoot(env);
}

export function createShimDir(env: NodeJS.ProcessEnv): ShimDir {
  const dir = fs.mkdtempSync(path.join(shimParent(env), 'agyctl-login-'));
  fs.chmodSync(dir, 0o700);
  live.add(dir);
  const log = path.join(dir, 'opened.log');
  fs.writeFileSync(log, '', { mode: 0o600 });
  for (const name of [...SHIM_NAMES, BROWSER_SHIM])
    fs.writeFileSync(path.join(dir, name), shimScript(log, name), { mode: 0o700 });
  return {
    dir,
    log,
    browser: path.join(dir, BROWSER_SHIM),
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
      live.delete(dir);
    },
  };
}

export interface LoginEnvOptions {
  fakeDisplay: boolean;
}

/**
 * The server's environment for a login: shims first on PATH, BROWSER at our
 * shim, a placeholder DISPLAY (some servers only try a browser when one is
 * set), and the variables that make servers skip the browser removed.
 */
export function loginServerEnv(base: NodeJS.ProcessEnv, shims: ShimDir, options: LoginEnvOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    PATH: [shims.dir, base.PATH ?? ''].filter(Boolean).join(path.delimiter),
    BROWSER: shims.browser,
  };
  if (options.fakeDisplay && !env.DISPLAY && !env.WAYLAND_DISPLAY) env.DISPLAY = FAKE_DISPLAY;
  delete env.CI;
  delete env.NO_BROWSER;
  if (env.DEBIAN_FRONTEND === 'noninteractive') delete env.DEBIAN_FRONTEND;
  return env;
}

const LOGIN_DIR = /^agyctl-login-[A-Za-z0-9]{6}$/;
/** The name mkdtemp gives a login's private dir. */
export const isLoginDirName = (name: string): boolean => LOGIN_DIR.test(name);
export const OWNER_FILE = 'owner';
/** A dir from a version that did not record its owner: removed only once it is this old. */
const UNOWNED_MAX_AGE_MS = 24 * 3600_000;

export function recordOwner(dir: string): void {
  fs.writeFileSync(path.join(dir, OWNER_FILE), holderLine(), { mode: 0o600, flag: 'wx' });
}

/** Removes stale login dirs under root; returns their paths. Never throws: a sweep is housekeeping. */
export function sweepStaleLoginDirs(root: string, now = Date.now()): string[] {
  return sweepStaleDirs(root, LOGIN_DIR, now);
}

/** The same sweep for other private temp dirs of ours (`name` matches our naming; each records its owner with recordOwner). */
export function sweepStaleDirs(root: string, name: RegExp, now = Date.now()): string[] {
  const uid = process.getuid?.();
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const entry of names) {
    if (!name.test(entry)) continue;
    const dir = path.join(root, entry);
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      if (!isStale(dir, st, now)) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      /* gone meanwhile, or not ours to read: leave it */
    }
  }
  return removed;
}

function isStale(dir: string, st: fs.Stats, now: number): boolean {
  const file = path.join(dir, OWNER_FILE);
  let text: string;
  try {
    if (!fs.lstatSync(file).isFile()) return false;
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return now - st.mtimeMs > UNOWNED_MAX_AGE_MS;
  }
  const owner = parseHolderLine(text);
  return owner !== undefined && !recordedProcessAlive(owner.pid, owner.start);
}
