/**
 * The few SQLite operations backup and restore need, on better-sqlite3.
 * Only modules under src/backup import this, and only commands that need
 * them import those (lazily), so the native module never slows startup.
 */
import Database from 'better-sqlite3';

export type Db = Database.Database;

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
  return new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
}

export function openReadWrite(file: string, busyTimeoutMs: number): Db {
  return new Database(file, { fileMustExist: true, timeout: busyTimeoutMs });
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
