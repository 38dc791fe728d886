/**
 * Reading settings.json without judging it: what is on disk, where a write
 * would go, and whether the content is JSON of the shape agyctl can edit.
 * validate.ts decides what the content means for the server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgyError } from '../core/errors.js';
import { stateFiles } from '../core/paths.js';
import { openNoFollow, unsafeSymlinkError } from '../util/os/safe-fs.js';
import { shellQuote } from '../util/shell-quote.js';
import {
  type JsonNode,
  type JsonOptions,
  JsonSyntaxError,
  lineColumn,
  member,
  parseJsonTree,
  toPlain,
} from './jsonc.js';

export interface SettingsError {
  /** syntax: not JSON. shape: JSON, but the top level, `auth` or `gcp` is not an object. */
  kind: 'syntax' | 'shape';
  message: string;
  line: number;
  column: number;
  /** The file starts with a UTF-8 byte-order mark, which JSON readers refuse: removing it is the fix. */
  bom?: true;
}

const BOM = '\ufeff';

/** The command that removes a leading byte-order mark from `file` in place (GNU sed). */
export const removeBomCommand = (file: string): string => `sed -i '1s/^\\xEF\\xBB\\xBF//' ${shellQuote(file)}`;

/** What parsing settings.json's text gives: the object, its tree, and why it cannot be edited in place. */
export interface ParsedSettings {
  /** The content, when it is a JSON object (set even when `auth`/`gcp` has the wrong shape). */
  data?: Record<string, unknown>;
  /** The ordered tree agyctl edits; present whenever `data` is. */
  tree?: JsonNode;
  /** Why agyctl must not edit the file in place. */
  error?: SettingsError;
  /**
   * The file has comments, which plain JSON does not: it was read leniently.
   * Whether the server's parser skips comments is not known (docs/assumptions.md,
   * `settings.comments`), so this is a warning, never a failed check.
   */
  comments?: true;
}

export interface SettingsFile extends ParsedSettings {
  /** <stateDir>/settings.json, as the server opens it. */
  path: string;
  exists: boolean;
  /** settings.json is a symlink; writes go to `target`. */
  symlink: boolean;
  /** The file a write replaces: the symlink's final target, or `path`. */
  target: string;
  /** The file's bytes as text (never printed: it may hold secrets a user put there). */
  raw?: string;
  /** Why the file could not be read at all (permission denied, a directory...). */
  unreadable?: string;
  /** What to do about it, when that is not "run as the server's user". */
  unreadableFix?: string;
  mode?: number;
  uid?: number;
  gid?: number;
}

/** Where a write to `file` must land so a symlink stays a symlink (also when its target does not exist yet). */
export function writeTarget(file: string): { symlink: boolean; target: string } {
  let symlink = false;
  let current = file;
  for (let hops = 0; hops < 40; hops++) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(current);
    } catch {
      return { symlink, target: current };
    }
    if (!st.isSymbolicLink()) return { symlink, target: current };
    symlink = true;
    current = path.resolve(path.dirname(current), fs.readlinkSync(current));
  }
  return { symlink, target: current }; // a loop: the write fails later with ELOOP, which is the truth
}

/**
 * `noFollow`: read only a regular file reached without a symlink (for a
 * write; throws `unsafe-symlink` on a link). Otherwise read as the server
 * would, through links. `comments`: the file may hold comments (gemini-cli's);
 * antigravity's is plain JSON.
 */
export function readSettings(stateDir: string, options: JsonOptions & { noFollow?: boolean } = {}): SettingsFile {
  const file = stateFiles(stateDir).settings;
  const base: SettingsFile = { path: file, exists: false, ...writeTarget(file) };
  let raw: string;
  let st: fs.Stats;
  if (options.noFollow) return readNoFollow(base, options);
  try {
    // O_NONBLOCK, and regular files only: a FIFO planted as settings.json must not hang the read.
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      st = fs.fstatSync(fd);
      if (st.isDirectory()) return isADirectory(base);
      if (!st.isFile()) return { ...base, exists: true, unreadable: 'settings.json is not a regular file' };
      raw = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return base;
    if (code === 'ENOTDIR') return stateDirNotADirectory(base, stateDir);
    return { ...base, exists: true, unreadable: (err as Error).message };
  }
  const found: SettingsFile = { ...base, exists: true, raw, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
  return { ...found, ...parseLeniently(raw, options) };
}

const isADirectory = (base: SettingsFile): SettingsFile => ({
  ...base,
  exists: true,
  unreadable: 'settings.json is a directory, not a file',
  unreadableFix: `move it aside (mv ${base.path} ${base.path}.dir), then write the file with agyctl settings set-auth <type>`,
});

/** `--state-dir /etc/passwd`: there is no settings.json because the state dir is not a directory at all. */
const stateDirNotADirectory = (base: SettingsFile, stateDir: string): SettingsFile => ({
  ...base,
  exists: false,
  unreadable: `the state dir ${stateDir} is not a directory`,
  unreadableFix: "point --state-dir (AGYCTL_STATE_DIR) at the server's state directory, e.g. ~/.gemini/antigravity-acp",
});

function readNoFollow(base: SettingsFile, options: JsonOptions): SettingsFile {
  if (base.symlink) throw unsafeSymlinkError(base.path, 'settings.json');
  let fd: number;
  try {
    fd = openNoFollow(base.path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK, 0, 'settings.json');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return base;
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return stateDirNotADirectory(base, path.dirname(base.path));
    if (err instanceof AgyError) throw err; // unsafe-symlink
    return { ...base, exists: true, unreadable: (err as Error).message };
  }
  try {
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) return isADirectory(base);
    if (!st.isFile()) return { ...base, exists: true, unreadable: 'settings.json is not a regular file' };
    const raw = fs.readFileSync(fd, 'utf8');
    return {
      ...base,
      exists: true,
      raw,
      mode: st.mode & 0o7777,
      uid: st.uid,
      gid: st.gid,
      ...parseLeniently(raw, options),
    };
  } finally {
    fs.closeSync(fd);
  }
}

/** As parseSettingsText; text that is plain JSON but for its comments is read with them, and says so. */
function parseLeniently(raw: string, options: JsonOptions): ParsedSettings {
  const strict = parseSettingsText(raw, options);
  if (options.comments || strict.error?.kind !== 'syntax') return strict;
  const relaxed = parseSettingsText(raw, { ...options, comments: true });
  return relaxed.error?.kind === 'syntax' ? strict : { ...relaxed, comments: true };
}

/** Parse settings text: the object (if any) and the first reason it cannot be edited in place. */
export function parseSettingsText(raw: string, options: JsonOptions = {}): ParsedSettings {
  // JSON forbids a byte-order mark (RFC 8259 section 8.1), and JSON.parse and Python's json refuse one,
  // so the server may too: the file is named as unusable until the mark is removed.
  if (raw.startsWith(BOM))
    return {
      error: {
        kind: 'syntax',
        message: 'the file starts with a byte-order mark (U+FEFF), which JSON does not allow',
        line: 1,
        column: 1,
        bom: true,
      },
    };
  let tree: JsonNode;
  try {
    tree = parseJsonTree(raw, options);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    return { error: { kind: 'syntax', message: err.message, line: err.line, column: err.column } };
  }
  if (tree.type !== 'object') {
    return { error: shapeError(raw, tree, `the top level is ${describeNode(tree)}, not an object`) };
  }
  const data = toPlain(tree) as Record<string, unknown>;
  for (const key of ['auth', 'gcp']) {
    const node = member(tree, key);
    if (node && node.type !== 'object')
      return { data, tree, error: shapeError(raw, node, `"${key}" is ${describeNode(node)}, not an object`) };
  }
  return { data, tree };
}

function shapeError(raw: string, node: JsonNode, message: string): SettingsError {
  return { kind: 'shape', message, ...lineColumn(raw, node.offset) };
}

function describeNode(node: JsonNode): string {
  if (node.type === 'array') return 'an array';
  if (node.type === 'object') return 'an object';
  if (node.type === 'null') return 'null';
  return `a ${node.type}`;
}
