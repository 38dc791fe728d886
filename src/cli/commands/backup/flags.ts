/**
 * The flags of `backup`, `backup list`, `backup verify` and `__snapshot-archive`, as commander gives them
 * (register.ts declares them); each handler checks its own once. `backup`'s, checked: BackupCommandOptions.
 */
import type { BackupOptions } from '../../../backup/run-backup.js';

/** `agyctl backup`'s flags, as commander gives them. */
export interface BackupFlags {
  to?: string;
  session?: string[];
  keepLast?: string;
  keepDaily?: string;
  keepWeekly?: string;
  dryRun?: boolean;
  busyTimeout: string;
  compact?: boolean;
  jobs?: string;
  archive?: string;
  prometheus?: string;
  prove?: boolean;
  proveTimeout?: string;
  /** The deadline of the owner's side (root on a user's state dir). */
  timeout?: string;
  maxBytes?: string;
}

/** `agyctl backup`'s flags checked once (handler.ts): the run's options, and what acts around the run. */
export interface BackupCommandOptions extends BackupOptions {
  /** --dry-run: show what a run now would do, write nothing (dry-run.ts). */
  dryRun: boolean;
  /** --archive FILE or `-` (stdout), checked: also write the new snapshot as one tar stream. */
  archive: string | undefined;
  /** --prometheus FILE, absolute. */
  prometheus: string | undefined;
  /** --prove: each server call's deadline while proving the new snapshot; undefined without --prove. */
  proveCallTimeoutMs: number | undefined;
  /** --max-bytes: what root takes from a user's side in one run, at most (the stream's declared bytes). */
  maxBytes: number;
}

/** `agyctl backup verify`'s flags. */
export interface VerifyFlags {
  from?: string;
  prove?: boolean;
  proveTimeout: string;
  /** Options of `backup` itself given with `backup verify` (commander hands them to the parent wherever they stand). */
  backupOnly?: string[];
}

/** `agyctl backup list`'s flags. */
export interface ListFlags {
  from?: string;
}

/** `agyctl __snapshot-archive`'s flags: the part of `backup`'s that reads the state dir. */
export interface SnapshotArchiveFlags {
  /** Only list the sessions a run would back up (root's `backup --dry-run`), as JSON on stdout. */
  plan?: boolean;
  session?: string[];
  busyTimeout: string;
  compact?: boolean;
  jobs?: string;
  /** Root's previous snapshot of this state dir comes on stdin (owner-reuse.ts): unchanged sessions are sent without their database. */
  previousStdin?: boolean;
}
