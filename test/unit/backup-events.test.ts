// The words of backup's, restore's and the proofs' events (src/backup/events.ts): each event is
// said on stderr as the sentence the use cases used to write themselves, at the same level.
import { describe, expect, it } from 'vitest';
import type { BackupEvent } from '../../src/backup/events.js';
import type { ManifestSession } from '../../src/backup/manifest.js';
import { sayBackupEvents } from '../../src/cli/commands/backup/progress.js';
import { PLAIN, type Reporter } from '../../src/core/io.js';
import { describeUnrecognised } from '../../src/core/paths.js';

function said(event: BackupEvent): Array<[string, string]> {
  const lines: Array<[string, string]> = [];
  const out: Reporter = {
    c: PLAIN,
    e: PLAIN,
    json: false,
    stderrIsTTY: false,
    stdoutIsTTY: false,
    stderrEscapes: false,
    print: (line = '') => lines.push(['print', line]),
    info: (message) => lines.push(['info', message]),
    warn: (message) => lines.push(['warn', message]),
    verbose: (message) => lines.push(['verbose', message]),
    server: (note) => lines.push(['server', JSON.stringify(note)]),
    status: (message) => lines.push(['status', message]),
    clearStatus: () => undefined,
    event: () => undefined,
    error: (message) => lines.push(['error', message]),
  };
  sayBackupEvents(out)(event);
  return lines;
}

const session = (fields: Partial<ManifestSession>): ManifestSession =>
  ({ id: 'a1', bytes: 4096, reused: false, ...fields }) as ManifestSession;

describe('backup events, in words', () => {
  it.each<[BackupEvent, 'warn' | 'verbose', string]>([
    [
      { type: 'no-database', ids: ['a1'] },
      'warn',
      'a1: no database beside its other files (a .meta or -shm alone); nothing to back up',
    ],
    [
      { type: 'no-database', ids: ['a1', 'b2'] },
      'warn',
      'a1, b2: no database beside their other files (a .meta or -shm alone); nothing to back up',
    ],
    [
      { type: 'reuse-skipped', snapshot: '2026-01-01T000000Z', error: 'manifest.json is damaged' },
      'warn',
      'skipping 2026-01-01T000000Z for reuse: manifest.json is damaged',
    ],
    [
      { type: 'owner-reuse-refused' },
      'warn',
      "the state dir's owner named a session unchanged that root's previous snapshot does not match; copying all again",
    ],
    [
      { type: 'brain-file-skipped', id: 'a1', path: 'x\u001b[2Jy.md', reason: 'too large' },
      'warn',
      'a1: brain/a1/xy.md skipped: too large',
    ],
    [{ type: 'session-done', session: session({}), ms: 12 }, 'verbose', 'a1: snapshot 4096 bytes in 12 ms'],
    [
      { type: 'session-done', session: session({ reused: true, reusedFrom: '2026-01-01T000000Z' }), ms: 3 },
      'verbose',
      'a1: reused from 2026-01-01T000000Z in 3 ms',
    ],
    [{ type: 'session-failed', id: 'a1', reason: 'database is locked' }, 'warn', 'a1: database is locked'],
    [
      { type: 'retention-skipped', why: '1 session(s) failed in this run' },
      'warn',
      'retention skipped: 1 session(s) failed in this run; no snapshot was deleted',
    ],
    [
      { type: 'snapshot-not-removed', snapshot: '2026-01-01T000000Z', error: 'EACCES' },
      'warn',
      'could not remove snapshot 2026-01-01T000000Z: EACCES',
    ],
    [
      { type: 'leftover-removed', name: '.agyctl-restore-1' },
      'verbose',
      'removed .agyctl-restore-1, left by a restore that was killed',
    ],
    [
      { type: 'session-not-restored', id: 'a1', reason: 'the database is locked' },
      'warn',
      'a1: not restored: the database is locked',
    ],
    [
      { type: 'forced-while-open', files: 'a1.db (pid 42)' },
      'warn',
      '--force: restoring although a1.db (pid 42) is open; a running server may overwrite or corrupt it',
    ],
    [{ type: 'credentials-changed', note: 'the note as the report has it' }, 'warn', 'the note as the report has it'],
    [
      { type: 'replay-not-recorded', why: 'replay not recorded in /s: EROFS' },
      'warn',
      'replay not recorded in /s: EROFS',
    ],
  ])('%o', (event, level, text) => {
    expect(said(event)).toEqual([[level, text]]);
  });

  it('names unrecognised entries as core/paths words them', () => {
    expect(said({ type: 'unrecognised-entries', entries: ['notes.txt'] })).toEqual([
      ['warn', describeUnrecognised(['notes.txt'])],
    ]);
  });
});
