/** How a failure reads in a report line, and which failures mean the destination is full (the whole run stops). */

/** Errors that mean "the destination cannot take more data": the whole run stops, nothing half-written remains. */
const NO_SPACE: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large (file-size limit)',
  SQLITE_FULL: 'the disk is full',
  // SQLite reports EFBIG and other failed writes this way; the snapshot is its only write target.
  SQLITE_IOERR_WRITE: 'a write failed: the disk is full, a quota or file-size limit was hit, or the device failed',
  SQLITE_IOERR_FSYNC: 'fsync failed',
  SQLITE_IOERR_TRUNCATE: 'a write failed',
};

export function isNoSpace(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code in NO_SPACE;
}

export function noSpaceText(err: unknown): string {
  const code = String((err as { code?: unknown } | null)?.code);
  return `${NO_SPACE[code] ?? errorText(err)} (${code})`;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
