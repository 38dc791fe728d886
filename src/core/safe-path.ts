/**
 * Paths built from outside data. Session ids come from a server, a
 * manifest, a directory listing or a flag: only UUIDs ever become part of a
 * path, and every such path is checked to stay inside its directory before
 * anything is written or deleted there (a server answering `..` must never
 * steer an `rm -rf` at the state dir).
 */
import path from 'node:path';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path built from outside data would leave its directory. */
export class UnsafePathError extends Error {}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Show an untrusted value in a message: quoted, short, no control characters. */
export function showUntrusted(value: unknown, max = 60): string {
  const text = typeof value === 'string' ? value : String(value);
  const clean = [...text]
    .map((c) => (c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f) ? '?' : c))
    .join('');
  return JSON.stringify(clean.length > max ? `${clean.slice(0, max)}…` : clean);
}

/**
 * `dir/name` for a single path component `name`; refuses an empty name, `.`,
 * `..`, separators and NUL, and checks the result is a direct child of dir.
 */
export function childPath(dir: string, name: string): string {
  const plain =
    name.length > 0 &&
    name !== '.' &&
    name !== '..' &&
    !name.includes('/') &&
    !name.includes('\\') &&
    !name.includes('\0');
  const base = path.resolve(dir);
  const full = path.join(base, name);
  if (!plain || path.dirname(full) !== base)
    throw new UnsafePathError(`${showUntrusted(name)} is not a plain file name inside ${dir}`);
  return full;
}
