/**
 * Durations as systemd spells them (systemd.time(7)): `500ms`, `90s`, `5min`,
 * `1h 30min`, `1h30min`, `2d`. The role's unit files and agyctl's flags then
 * take the same values. A bare number has no unit here: systemd reads it as
 * seconds in one place and microseconds in another, so we ask instead.
 */

/** Milliseconds per unit, by every spelling systemd.time(7) gives for it. */
const UNIT_MS: Readonly<Record<string, number>> = {
  us: 0.001,
  usec: 0.001,
  µs: 0.001,
  ms: 1,
  msec: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

/**
 * The longest duration a flag takes: a round 24 days. Node's timers keep at most
 * 2^31-1 ms (about 24.8 days) and fire a longer one at once; this leaves hours
 * to spare for the margins commands add to a deadline.
 */
export const MAX_DURATION_MS = 24 * 86_400_000;

export type DurationParse = { ok: true; ms: number } | { ok: false; reason: 'no-unit' | 'malformed' };

/** Parse a systemd-style duration into milliseconds (rounded to whole ms). */
export function parseDurationText(text: string): DurationParse {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return { ok: false, reason: 'no-unit' };
  // A number, optional spaces, a unit made of letters; components may be separated by spaces.
  const re = /\s*(\d+(?:\.\d+)?)\s*([a-zµ]+)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(trimmed); m; m = re.exec(trimmed)) {
    const unit = UNIT_MS[m[2] as string];
    if (unit === undefined) return { ok: false, reason: 'malformed' };
    total += Number(m[1]) * unit;
    consumed = re.lastIndex;
  }
  if (consumed === 0 || consumed !== trimmed.length) return { ok: false, reason: 'malformed' };
  return { ok: true, ms: Math.round(total) };
}

/**
 * A duration for people: `250ms`, `45s`, `2m05s`, `3h10m`, `2d4h`, `56y337d`. Under a
 * second it stays in ms, so a short wait never reads as `0s`.
 */
export function formatDuration(ms: number): string {
  if (ms < 999.5) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  const d = Math.floor(h / 24);
  if (d < 365) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  // An expiry decades away or ago (a token stamped 0, a clock gone wrong) reads in years, not in thousands of days.
  return d % 365 === 0 ? `${d / 365}y` : `${Math.floor(d / 365)}y${d % 365}d`;
}

/**
 * `ms` as a flag value every agyctl reads, older ones included (they took
 * ms, s, m and h only): for the --timeout connect passes to the remote login.
 */
export function durationArg(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
