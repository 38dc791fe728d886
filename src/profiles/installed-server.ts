/**
 * Servers agyctl installed from their published archives (`agyctl server
 * install`, src/server/): where they live and which one is current. A
 * prefix holds `<name>/<version>/` (the archive as published, unpacked),
 * `<name>/.<version>.json` (what the install recorded: the command, the
 * archive's sha256, when) and `<name>/current`, a symlink to `<version>`.
 *
 * Where agyctl looks without --server: the caller's own prefix
 * (`$XDG_DATA_HOME/agyctl/servers`, else `~/.local/share/agyctl/servers`),
 * then the system prefix (`/opt/agyctl/servers`), then PATH (docs/server.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { homeDir } from '../core/paths.js';

export const SYSTEM_SERVER_PREFIX = '/opt/agyctl/servers';
export const CURRENT_LINK = 'current';
/** A version is one plain path component: digits, letters, `.`, `_`, `+`, `-`, starting with a letter or digit. */
export const VERSION_NAME = /^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/;

export interface InstalledMeta {
  name: string;
  version: string;
  /** The server's command, relative to the version's directory (from agent.json, else the known layout). */
  cmd: string;
  args: string[];
  sha256: string;
  bytes: number;
  archive: string;
  installedAt: string;
}

/** The caller's own prefix: `$XDG_DATA_HOME/agyctl/servers`, else `~/.local/share/agyctl/servers`. */
export function userServerPrefix(env: NodeJS.ProcessEnv): string {
  const data = env.XDG_DATA_HOME;
  const base = data && path.isAbsolute(data) ? data : path.join(homeDir(env), '.local', 'share');
  return path.join(base, 'agyctl', 'servers');
}

/** Where `server` commands work without --prefix: root's is the system prefix, a user's their own. */
export function defaultServerPrefix(env: NodeJS.ProcessEnv, uid = process.getuid?.() ?? 0): string {
  return uid === 0 ? SYSTEM_SERVER_PREFIX : userServerPrefix(env);
}

export const metaFile = (nameDir: string, version: string): string => path.join(nameDir, `.${version}.json`);

/** The version `current` points at, or undefined (no link, or a link that is not a plain version name). */
export function currentVersion(nameDir: string): string | undefined {
  let target: string;
  try {
    target = fs.readlinkSync(path.join(nameDir, CURRENT_LINK));
  } catch {
    return undefined;
  }
  return VERSION_NAME.test(target) && target !== CURRENT_LINK ? target : undefined;
}

/** The record of an installed version, or undefined when it is missing or not what an install writes. */
export function readMeta(nameDir: string, version: string): InstalledMeta | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(metaFile(nameDir, version), 'utf8')) as Partial<InstalledMeta>;
    if (typeof value.cmd !== 'string' || !Array.isArray(value.args)) return undefined;
    if (!value.args.every((a) => typeof a === 'string')) return undefined;
    return value as InstalledMeta;
  } catch {
    return undefined;
  }
}

export interface InstalledCommand {
  file: string;
  args: string[];
  version: string;
}

/** The current install of `name` under `prefix` whose command is an executable file inside its version's directory. */
export function installedCommand(prefix: string, name: string): InstalledCommand | undefined {
  const nameDir = path.join(prefix, name);
  const version = currentVersion(nameDir);
  if (!version) return undefined;
  const meta = readMeta(nameDir, version);
  if (!meta) return undefined;
  const dir = path.join(nameDir, version);
  const file = path.resolve(dir, meta.cmd);
  if (!file.startsWith(`${dir}${path.sep}`)) return undefined;
  try {
    if (!fs.statSync(file).isFile()) return undefined;
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return undefined;
  }
  return { file, args: [...meta.args], version };
}

/** The caller's current install, then the system one; undefined when neither has one. */
export function findInstalledServer(name: string, env: NodeJS.ProcessEnv): InstalledCommand | undefined {
  let user: string | undefined;
  try {
    user = userServerPrefix(env);
  } catch {
    user = undefined; // no usable HOME: only the system prefix
  }
  for (const prefix of [user, SYSTEM_SERVER_PREFIX]) {
    if (prefix === undefined) continue;
    const found = installedCommand(prefix, name);
    if (found) return found;
  }
  return undefined;
}
