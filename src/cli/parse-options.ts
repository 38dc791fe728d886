/** Validation of option values shared by commands; bad values are usage errors (exit 2) naming the fix. */
import { usageError } from '../core/errors.js';
import { parseDuration } from '../util/duration.js';

export function parseDurationOption(flag: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0)
    throw usageError(`${flag} must be a duration like 90s, 10m or 1h (got ${JSON.stringify(value)}).`);
  return ms;
}

export function parseCountOption(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw usageError(`${flag} must be a whole number (got ${JSON.stringify(value)}).`);
  return Number(value);
}

/** commander's argParser for a repeatable option (`--session A --session B` -> ['A', 'B']). */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
