/**
 * What backup, restore, their proofs and `sessions export` tell a person as they run,
 * beside their reports, as typed events: the use cases emit them and never write text;
 * cli/commands/backup/progress.ts words them (warnings on stderr, details for --verbose).
 */
import type { ManifestSession } from './manifest.js';

/** A snapshot run (run-backup.ts). */
export type RunEvent =
  /** Files in conversations/ named otherwise than a conversation's, left alone. */
  | { type: 'unrecognised-entries'; entries: string[] }
  /** Conversations with no database beside their other files: nothing to back up. */
  | { type: 'no-database'; ids: string[] }
  | { type: 'reuse-skipped'; snapshot: string; error: string }
  /** The state dir's owner named a session unchanged that root's previous snapshot does not match. */
  | { type: 'owner-reuse-refused' }
  | { type: 'brain-file-skipped'; id: string; path: string; reason: string }
  /** For --verbose: a session snapshotted or reused, in `ms`. */
  | { type: 'session-done'; session: ManifestSession; ms: number }
  | { type: 'session-failed'; id: string; reason: string };

/** Retention after a run (retention.ts). */
export type RetentionEvent =
  | { type: 'retention-skipped'; why: string }
  | { type: 'snapshot-not-removed'; snapshot: string; error: string };

/** A restore (restore.ts). */
export type RestoreEvent =
  /** For --verbose: a private dir a killed restore left behind, removed. */
  | { type: 'leftover-removed'; name: string }
  | { type: 'session-not-restored'; id: string; reason: string }
  /** --force: files a process holds open, restored over all the same. */
  | { type: 'forced-while-open'; files: string };

/** A proof on a scratch copy (prove-snapshot.ts). */
export type ProveEvent =
  /** The box's settings or token changed while a scratch server ran (prove-snapshot.ts); `note` is also in its report. */
  | { type: 'credentials-changed'; note: string }
  /** A proof's replay could not be recorded in the snapshot (`why` is also in its report). */
  | { type: 'replay-not-recorded'; why: string };

export type BackupEvent = RunEvent | RetentionEvent | RestoreEvent | ProveEvent;
