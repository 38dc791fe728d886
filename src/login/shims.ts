/**
 * URL capture through fake browsers. A private 0700 directory holds one
 * executable per name a server might run to open a browser; each appends
 * its arguments to a log that agyctl watches. The directory goes away on
 * every exit path (the caller's finally, and the process exit hook).
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempRoot } from '../paths.js';

export const SHIM_NAMES = ['xdg-open', 'open', 'sensible-browser', 'x-www-browser', 'www-browser', 'gnome-open', 'kde-open', 'wslview'] as const;
export const BROWSER_SHIM = 'agyctl-browser';
const FAKE_DISPLAY = ':0';

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
  // One line per argument, tagged with the shim's name. printf, not echo: no escapes interpreted.
  const q = `'${log.replace(/'/g, `'\\''`)}'`;
  return `#!/bin/sh\n# agyctl login: records the URL the server tried to open (${name}).\nfor a in "$@"; do printf '%s\\t%s\\n' '${name}' "$a" >> ${q}; done\nexit 0\n`;
}

export function createShimDir(env: NodeJS.ProcessEnv): ShimDir {
  const dir = fs.mkdtempSync(path.join(tempRoot(env), 'agyctl-login-'));
  fs.chmodSync(dir, 0o700);
  live.add(dir);
  const log = path.join(dir, 'opened.log');
  fs.writeFileSync(log, '', { mode: 0o600 });
  for (const name of [...SHIM_NAMES, BROWSER_SHIM]) fs.writeFileSync(path.join(dir, name), shimScript(log, name), { mode: 0o700 });
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
  const env: NodeJS.ProcessEnv = { ...base, PATH: [shims.dir, base.PATH ?? ''].filter(Boolean).join(path.delimiter), BROWSER: shims.browser };
  if (options.fakeDisplay && !env.DISPLAY && !env.WAYLAND_DISPLAY) env.DISPLAY = FAKE_DISPLAY;
  delete env.CI;
  delete env.NO_BROWSER;
  if (env.DEBIAN_FRONTEND === 'noninteractive') delete env.DEBIAN_FRONTEND;
  if (env.BROWSER === 'www-browser') env.BROWSER = shims.browser;
  return env;
}
