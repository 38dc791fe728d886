/** Validation of option values shared by commands; bad values are usage errors (exit 2) naming the fix. */
import { usageError } from '../core/errors.js';
import { formatDuration, MAX_DURATION_MS, parseDurationText } from '../util/duration.js';

const UNITS_HINT = 'units as in systemd.time: us, ms, s, min, h, d (also sec, minute(s), hr, hour(s), day(s))';

/**
 * A duration flag in milliseconds. Bad values are usage errors naming the fix: a bare
 * number (which unit?), an unknown spelling, zero, or more than agyctl's timers can wait
 * (Node fires a longer timer at once, which would read as a timeout).
 */
export function parseDurationOption(flag: string, value: string): number {
  const r = parseDurationText(value);
  if (!r.ok && r.reason === 'no-unit')
    throw usageError(`${flag} ${value.trim()} has no unit: write ${value.trim()}s or ${value.trim()}min.`, UNITS_HINT);
  if (!r.ok)
    throw usageError(
      `${flag} must be a duration like 90s, 5min or 1h 30min (got ${JSON.stringify(value)}).`,
      UNITS_HINT,
    );
  if (r.ms <= 0) throw usageError(`${flag} must be at least 1ms (got ${JSON.stringify(value)}).`);
  if (r.ms > MAX_DURATION_MS)
    throw usageError(
      `${flag} ${value.trim()} is longer than agyctl can wait: at most ${formatDuration(MAX_DURATION_MS)}.`,
      `pass ${flag} 24d or less (Node's timers stop at about 24.8 days)`,
    );
  return r.ms;
}

export function parseCountOption(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw usageError(`${flag} must be a whole number (got ${JSON.stringify(value)}).`);
  return Number(value);
}

const SIZE_UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** A size flag in bytes: a whole number with an optional binary unit K, M, G or T (as `du`/`truncate` read them). */
export function parseSizeOption(flag: string, value: string): number {
  const m = /^(\d+)\s*([KMGT]?)(?:i?B)?$/i.exec(value.trim());
  const bytes = m ? Number(m[1]) * SIZE_UNITS[m[2]!.toUpperCase()]! : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes <= 0)
    throw usageError(
      `${flag} must be a size like 500M or 20G (got ${JSON.stringify(value)}).`,
      'a whole number of bytes, or with K, M, G or T (powers of 1024)',
    );
  return bytes;
}
