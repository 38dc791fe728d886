/**
 * `set-auth` as a function: check everything first, then write once,
 * atomically. Any bad input throws a usage error before a byte changes.
 * Keys agyctl does not manage keep their place and their exact text.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { fsAgyError } from '../util/fs-errors.js';
import { fsyncDir, writeFileAtomic } from '../util/os/atomic-write.js';
import { copyFileNoFollow, lstatOrNull, mkdirPrivate } from '../util/os/safe-fs.js';
import {
  AUTH_TYPE_INFO,
  AUTH_TYPE_LIST,
  type AuthType,
  authTypeLabel,
  envIsSet,
  normalizeAuthType,
} from './auth-types.js';
import { setStringAt } from './jsonc.js';
import { readSettings, removeBomCommand, type SettingsFile } from './read.js';
import { gcpOf, locationProblem, projectProblem, rawAuthType } from './validate.js';

/** A new settings.json is private: it may hold project ids and sits beside the credentials. */
const NEW_FILE_MODE = 0o600;

export interface SetAuthOptions {
  project?: string | undefined;
  location?: string | undefined;
  /** Move an unparsable file aside instead of refusing. */
  force?: boolean | undefined;
  /** agyctl's environment: GOOGLE_CLOUD_PROJECT/LOCATION defaults, GOOGLE_API_KEY presence. */
  env?: NodeJS.ProcessEnv;
  now?: Date;
}

export type ValueSource = 'flag' | 'env' | 'file';

export interface SetAuthResult {
  path: string;
  /** The file replaced: always `path` (a symlinked settings.json is refused, never written through). */
  target: string;
  symlink: boolean;
  type: AuthType;
  /** The legacy name given on the command line, if any (e.g. vertex-ai). */
  legacyInput: string | undefined;
  /** auth.type before the change, as written (undefined when absent). */
  previousType: unknown;
  project: { value: string; source: ValueSource } | undefined;
  location: { value: string; source: ValueSource } | undefined;
  created: boolean;
  stateDirCreated: boolean;
  /** False when the file already said exactly this (nothing was written). */
  written: boolean;
  /** Where --force moved an unusable file. */
  backup: string | undefined;
  mode: number;
}

interface Resolved {
  type: AuthType;
  legacyInput: string | undefined;
  project: { value: string; source: ValueSource } | undefined;
  location: { value: string; source: ValueSource } | undefined;
}

export function setAuthType(stateDir: string, requested: string, options: SetAuthOptions = {}): SetAuthResult {
  const env = options.env ?? {};
  const norm = normalizeAuthType(requested);
  if (!norm) throw usageError(`unknown auth type ${JSON.stringify(requested)}; use one of: ${AUTH_TYPE_LIST}`);
  // Never through a link: a planted settings.json -> /etc/passwd must not be read, replaced or created (unsafe-symlink, exit 2).
  const file = readSettings(stateDir, { noFollow: true });
  refuseUnusable(file, options.force === true);
  const resolved = resolve(norm, file, { ...options, env });
  const text = render(file, resolved);
  const written = !(file.exists && !file.error && text === file.raw);
  const result: SetAuthResult = {
    path: file.path,
    target: file.target,
    symlink: file.symlink,
    ...resolved,
    previousType: rawAuthType(file.data),
    created: !file.exists,
    stateDirCreated: false,
    written,
    backup: undefined,
    mode: file.mode ?? NEW_FILE_MODE,
  };
  if (!written) return result;
  result.stateDirCreated = ensureStateDir(stateDir);
  if (file.exists && file.error && !isBlank(file)) result.backup = backup(file, options.now ?? new Date());
  commit(file, text);
  result.mode = fs.lstatSync(file.path).mode & 0o7777;
  return result;
}

/** An existing file agyctl cannot edit is never overwritten, unless --force moves it aside. */
function refuseUnusable(file: SettingsFile, force: boolean): void {
  if (file.unreadable) {
    throw new AgyError(EXIT.usage, 'settings-unreadable', `cannot read ${file.path}: ${file.unreadable}`, {
      hint: 'run agyctl as the user the server runs as',
    });
  }
  if (!file.error || force || isBlank(file)) return;
  const { message, line, column, kind, bom } = file.error;
  if (bom) {
    throw new AgyError(
      EXIT.usage,
      'settings-invalid',
      `${file.path} ${message}; remove it: ${removeBomCommand(file.path)}`,
      { hint: 'nothing was changed', details: { settings: { path: file.path, line, column, kind } } },
    );
  }
  const what = kind === 'syntax' ? 'is not valid JSON' : 'has a shape agyctl cannot edit';
  throw new AgyError(
    EXIT.usage,
    'settings-invalid',
    `${file.path} ${what}: ${message} at line ${line}, column ${column}; fix it, or rerun with --force to move it aside and write a fresh file`,
    {
      hint: 'nothing was changed',
      details: { settings: { path: file.path, line, column, kind } },
    },
  );
}

/** An empty (or whitespace-only) file holds nothing to lose: write it without --force or a backup. */
const isBlank = (file: SettingsFile): boolean => file.error?.kind === 'syntax' && (file.raw ?? '').trim() === '';

/** A gcp value's flag, its environment variable, and what a valid one looks like. */
interface GcpField {
  flag: string;
  envName: 'GOOGLE_CLOUD_PROJECT' | 'GOOGLE_CLOUD_LOCATION';
  check: (v: string) => string | undefined;
}

const PROJECT: GcpField = { flag: '--project', envName: 'GOOGLE_CLOUD_PROJECT', check: projectProblem };
const LOCATION: GcpField = { flag: '--location', envName: 'GOOGLE_CLOUD_LOCATION', check: locationProblem };

/** Where a gcp value may come from, in the order they win. */
interface Candidates {
  flag: string | undefined;
  env: string | undefined;
  file: string | undefined;
}

function resolve(
  { type, legacy: legacyInput }: { type: AuthType; legacy: string | undefined },
  file: SettingsFile,
  options: SetAuthOptions & { env: NodeJS.ProcessEnv },
): Resolved {
  const { env } = options;
  const usesGcp = AUTH_TYPE_INFO[type].gcp !== 'unused';
  const current = file.error ? { project: undefined, location: undefined } : gcpOf(file.data);
  const fromEnv = (field: GcpField): string | undefined => (usesGcp ? env[field.envName] : undefined);
  const project = pick(PROJECT, { flag: options.project, env: fromEnv(PROJECT), file: current.project });
  const location = pick(LOCATION, { flag: options.location, env: fromEnv(LOCATION), file: current.location });
  const missing = [project ? '' : '--project ID', location ? '' : '--location REGION'].filter(Boolean).join(' ');
  if (type === 'oauth-business' && missing) {
    throw usageError(
      `oauth-business needs a project and a location: pass ${missing} (or set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION)`,
    );
  }
  if (type === 'agent-platform' && missing && !envIsSet(env, 'GOOGLE_API_KEY')) {
    throw usageError(
      `${authTypeLabel(type, legacyInput)} needs a project and a location, or an API key: pass ${missing}, or set GOOGLE_API_KEY (also in the server's environment)`,
    );
  }
  return { type, legacyInput, project, location };
}

/** Flag, then environment, then what the file already has. Flag and env values are checked; file values stay as they are. */
function pick(
  { flag, envName, check }: GcpField,
  { flag: fromFlag, env: fromEnv, file: fromFile }: Candidates,
): { value: string; source: ValueSource } | undefined {
  if (fromFlag !== undefined) {
    const why = fromFlag === '' ? 'it is empty' : check(fromFlag);
    if (why) throw usageError(`${flag}: ${why}`);
    return { value: fromFlag, source: 'flag' };
  }
  if (fromEnv !== undefined && fromEnv !== '') {
    const why = check(fromEnv);
    if (why) throw usageError(`${envName}: ${why}; fix the variable or pass ${flag}`);
    return { value: fromEnv, source: 'env' };
  }
  return fromFile === undefined ? undefined : { value: fromFile, source: 'file' };
}

/**
 * The new file text: the old text with auth.type (and gcp values from flags or env) spliced in; a fresh file otherwise.
 * The reader accepted the old text, comments included, so the splice parses it the same way and keeps them.
 */
function render(file: SettingsFile, r: Resolved): string {
  const keep = { comments: file.comments === true };
  let text = file.exists && !file.error ? file.raw! : '{}\n';
  text = setStringAt(text, ['auth', 'type'], r.type, keep);
  for (const [key, v] of [
    ['project', r.project],
    ['location', r.location],
  ] as const) {
    if (v && v.source !== 'file') text = setStringAt(text, ['gcp', key], v.value, keep);
  }
  return text;
}

/** The server's own state dir is private: create it 0700, like the server. */
function ensureStateDir(stateDir: string): boolean {
  if (fs.existsSync(stateDir)) return false;
  try {
    mkdirPrivate(stateDir);
  } catch (err) {
    throw writeFailed(stateDir, whyMkdirFailed(stateDir, err));
  }
  return true;
}

/** settings.json.bak-<UTC timestamp>, next to settings.json, with the exact old bytes and mode. */
function backup(file: SettingsFile, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  let name = `${file.path}.bak-${stamp}`;
  for (let n = 1; lstatOrNull(name); n++) name = `${file.path}.bak-${stamp}-${n}`;
  try {
    copyFileNoFollow(file.path, name, file.mode ?? NEW_FILE_MODE);
    fsyncDir(path.dirname(name));
  } catch (err) {
    throw writeFailed(name, err);
  }
  return name;
}

/** Replace the file atomically. */
function commit(file: SettingsFile, text: string): void {
  try {
    writeFileAtomic(file.path, text, { mode: NEW_FILE_MODE });
  } catch (err) {
    throw writeFailed(file.path, err);
  }
}

/**
 * A recursive mkdir that cannot create a parent reports ENOENT for the leaf
 * (on a read-only HOME, say). The deepest directory that exists says why:
 * its own write access error (EROFS, EACCES) is the real one.
 */
function whyMkdirFailed(dir: string, err: unknown): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return err;
  let existing = path.resolve(dir);
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  try {
    fs.accessSync(existing, fs.constants.W_OK);
  } catch (real) {
    return real;
  }
  return err;
}

/** An ordinary file-system failure is named as one (fs-read-only, fs-permission-denied, …, with path and errno). */
function writeFailed(target: string, err: unknown): AgyError {
  const ordinary = fsAgyError(err, { defaultPath: target });
  if (ordinary)
    return new AgyError(ordinary.exit, ordinary.code, `cannot write ${target}: ${ordinary.message}`, {
      hint: `${ordinary.hint}, or pass --state-dir DIR (AGYCTL_STATE_DIR) for a state dir that can be written`,
      details: ordinary.details,
      cause: err,
    });
  return new AgyError(EXIT.usage, 'settings-write-failed', `cannot write ${target}: ${(err as Error).message}`, {
    hint: 'check the permissions of the state directory, or run agyctl as the user the server runs as',
    cause: err,
  });
}
