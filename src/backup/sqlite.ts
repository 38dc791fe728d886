/**
 * The few SQLite operations backup and restore need, on better-sqlite3.
 * Only modules under src/backup import this, and only commands that need
 * them import those (lazily), so the native module never slows startup.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AgyError, EXIT } from '../core/errors.js';
import { bundledRuntime, type LoadedBinding } from '../core/runtime.js';
import { sha256File } from '../util/os/file-hash.js';

export type Db = Database.Database;

let loaded: LoadedBinding | undefined;

/**
 * The better-sqlite3 addon, loaded once: the one the executable carries, or
 * the npm package's build. Loaded here rather than by better-sqlite3 itself so
 * that a binding built for another Node is one clear error naming the fix, and
 * `agyctl version` can say which file it was.
 */
export function sqliteBinding(): LoadedBinding {
  loaded ??= bundledRuntime()?.sqliteBinding() ?? packageBinding();
  return loaded;
}

const OTHER_NODE_HINT = (): string =>
  `better-sqlite3 was built for another Node (${process.version} runs now): run \`npm rebuild -g agyctl\`, or install the .deb or the single executable, which carry their own Node (docs/install.md).`;
/** npm 11 runs no install script it was not allowed to: then the binding was never compiled. */
const NOT_BUILT_HINT =
  'npm did not build better-sqlite3 (its install script did not run): run `npm rebuild -g agyctl`, or install the .deb or the single executable (docs/install.md).';

function packageBinding(): LoadedBinding {
  const require = createRequire(import.meta.url);
  const file = path.join(
    path.dirname(require.resolve('better-sqlite3/package.json')),
    'build',
    'Release',
    'better_sqlite3.node',
  );
  const module = { exports: {} };
  try {
    process.dlopen(module, file);
  } catch (err) {
    throw bindingError(file, err, fs.existsSync(file) ? OTHER_NODE_HINT() : NOT_BUILT_HINT);
  }
  return { addon: module.exports, path: file };
}

/** better-sqlite3's version: fixed in the executable, else from its package.json. */
export function betterSqlite3Version(): string {
  const bundled = bundledRuntime();
  if (bundled) return bundled.betterSqlite3;
  const require = createRequire(import.meta.url);
  return (require('better-sqlite3/package.json') as { version: string }).version;
}

/** The binding at `file` cannot be loaded: exit 1 with the fix, never a stack trace. */
export function bindingError(file: string, cause: unknown, hint: string): AgyError {
  const why = (cause instanceof Error ? cause.message : String(cause)).replace(/\s*\n\s*/g, ' ');
  return new AgyError(EXIT.internal, 'sqlite-binding', `Cannot load the SQLite binding ${file}: ${why}`, {
    hint,
    cause,
    details: { binding: file },
  });
}

/** better-sqlite3 takes an addon object too; its types only know the path form. */
const withBinding = (options: Database.Options): Database.Options => ({
  ...options,
  nativeBinding: sqliteBinding().addon as unknown as string,
});

/** SQLite's own version, from the loaded binding (a query, so the binding is known to work). */
export function sqliteVersion(): string {
  const db = new Database(':memory:', withBinding({}));
  try {
    return (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  } finally {
    db.close();
  }
}

/**
 * Page cache for a VACUUM INTO (the copy gets the same). Small is faster here:
 * the data streams through once, and pages handed back to the kernel early
 * stay in the CPU caches (figures: docs/backup.md, Speed).
 */
export const VACUUM_CACHE_KIB = 256;

/**
 * integrity_check and row counts of a fresh copy agyctl just made, which
 * nothing else touches: mapped instead of one pread per page (bounded, for
 * peak RSS), and a small cache for the same reason as the vacuum's
 * (figures: docs/backup.md, Speed).
 */
export function checkFreshCopy(file: string): { integrity: string; rows: Record<string, number> } {
  const db = openReadOnly(file, 0);
  try {
    db.pragma('mmap_size = 16777216');
    db.pragma('cache_size = -512');
    return { integrity: integrityCheck(db), rows: rowCounts(db) };
  } finally {
    db.close();
  }
}

/**
 * Read-only, and the file must exist: better-sqlite3 has no URI support, so a
 * wrong path would otherwise silently create an empty database, and a
 * `file:...?mode=ro` string would create a file with that literal name.
 */
export function openReadOnly(file: string, busyTimeoutMs: number): Db {
  return new Database(file, withBinding({ readonly: true, fileMustExist: true, timeout: busyTimeoutMs }));
}

export function openReadWrite(file: string, busyTimeoutMs: number): Db {
  return new Database(file, withBinding({ fileMustExist: true, timeout: busyTimeoutMs }));
}

/** SQLITE_BUSY and its extended codes: another connection holds a lock; worth retrying. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

/** SQLITE_CORRUPT, SQLITE_NOTADB and their extended codes. */
export function isCorrupt(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/** `PRAGMA integrity_check` as one string: "ok", or the problems joined. */
export function integrityCheck(db: Db): string {
  const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
  return rows.map((r) => r.integrity_check).join('; ');
}

export function userTables(db: Db): string[] {
  const rows = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all() as Array<{ name: string }>;
  return rows.map((r) => r.name);
}

export function rowCounts(db: Db): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const table of userTables(db)) {
    const row = db.prepare(`SELECT count(*) AS n FROM "${table.replaceAll('"', '""')}"`).get() as { n: number };
    counts[table] = row.n;
  }
  return counts;
}

/**
 * SQLite header fields that differ between two VACUUM INTO copies of the same content: the change counter,
 * the schema cookie (bumped by a journal-mode switch), version-valid-for and the writing library's version.
 */
const VOLATILE_SQLITE_HEADER: ReadonlyArray<readonly [number, number]> = [
  [24, 28],
  [40, 44],
  [92, 100],
];

/** Two compacted (VACUUM INTO) database files hold the same content: same size, same bytes past the volatile header fields. */
export function sameDatabaseContent(a: string, b: string): boolean {
  if (fs.statSync(a).size !== fs.statSync(b).size) return false;
  return sha256File(a, { zeroed: VOLATILE_SQLITE_HEADER }) === sha256File(b, { zeroed: VOLATILE_SQLITE_HEADER });
}

/** A snapshot's database file, where it is, and how it was made (ManifestSession.compacted). */
export interface SnapshotDbFile {
  file: string;
  /** false: the checked private copy itself; true, or undefined (older snapshots): compacted with VACUUM INTO. */
  compacted: boolean | undefined;
}

/**
 * Whether `compact`, a VACUUM INTO copy of a database, holds the content of
 * the snapshot file `snapshotFile`. A snapshot that is not compacted (the
 * private copy itself: its pages in the live file's order, its free pages
 * kept) is compacted into `scratch` for the comparison, and that file removed.
 */
export function holdsSnapshotContent(compact: string, snapshot: SnapshotDbFile, scratch: string): boolean {
  if (snapshot.compacted !== false) return sameDatabaseContent(compact, snapshot.file);
  const again = path.join(scratch, 'snapshot-compact.db');
  try {
    const db = openReadOnly(snapshot.file, 0);
    try {
      db.prepare('VACUUM INTO ?').run(again);
    } finally {
      db.close();
    }
    return sameDatabaseContent(compact, again);
  } finally {
    fs.rmSync(again, { force: true });
  }
}
