/**
 * RC01's names for a conversation's files under conversations/ (the
 * reference's on-disk table): `<id>.db`, `<id>.db-wal`, `<id>.db-shm`,
 * `<id>.meta`. A build that names them otherwise must not be backed up as
 * "nothing" in silence, so the entries that fit none of them are named in a
 * note (docs/assumptions.md).
 */
import fs from 'node:fs';
import { showUntrusted } from '../core/safe-path.js';

/** `<stem>.<kind>`; the stem is checked to be a session id by the caller. */
export const CONVERSATION_FILE = /^(.+)\.(db|db-wal|db-shm|meta)$/;

/** Entries of `dir` that are not named like a conversation's files, sorted; empty when `dir` cannot be read. */
export function unrecognisedEntries(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((name) => !CONVERSATION_FILE.test(name))
      .sort();
  } catch {
    return [];
  }
}

/** One line naming a few of them (file names are untrusted text). */
export function describeUnrecognised(names: readonly string[]): string {
  const shown = names.slice(0, 3).map((n) => showUntrusted(n));
  const more = names.length > 3 ? ` and ${names.length - 3} more` : '';
  const one = names.length === 1;
  return `${names.length} ${one ? 'entry' : 'entries'} in conversations/ ${one ? 'is' : 'are'} not named like a conversation's files (<id>.db, .db-wal, .db-shm, .meta): ${shown.join(', ')}${more}; agyctl does not back ${one ? 'it' : 'them'} up (does this server build name its files differently? see docs/assumptions.md)`;
}
