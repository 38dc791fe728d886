/** One row of `probe --assumptions`: a fact from docs/assumptions.md and what this box showed about it. */
import { serverText } from '../acp/redact.js';

/** held: the box shows the fact. differs: it shows something else (in `seen`). unknown: nothing here could show it (why, in `seen`). */
export type AssumptionVerdict = 'held' | 'differs' | 'unknown';

export interface Assumption {
  /** Stable id, the same as the row's in docs/assumptions.md. */
  id: string;
  /** The fact, in one line. */
  fact: string;
  verdict: AssumptionVerdict;
  /** What was seen (redacted, one line, no credential), or why the fact could not be checked; null when it held as stated. */
  seen: string | null;
}

/** Server- or disk-derived text goes through the redactor and loses control characters before it is stored or printed. */
export const seenText = (text: string): string => serverText(text, { singleLine: true });

export const held = (id: string, fact: string, seen: string | null = null): Assumption => ({
  id,
  fact,
  verdict: 'held',
  seen: seen === null ? null : seenText(seen),
});

export const differs = (id: string, fact: string, seen: string): Assumption => ({
  id,
  fact,
  verdict: 'differs',
  seen: seenText(seen),
});

export const unknown = (id: string, fact: string, why: string): Assumption => ({
  id,
  fact,
  verdict: 'unknown',
  seen: seenText(why),
});
