/** `agyctl restore`'s flags as commander gives them (register.ts declares them), and as the handler checks them once. */
import type { RestoreOptions } from '../../../backup/restore.js';

/** `agyctl restore`'s flags, as commander gives them. */
export interface RestoreFlags {
  archive?: string;
  session?: string[];
  from?: string;
  force?: boolean;
  dryRun?: boolean;
  prove?: boolean;
  proveTimeout: string;
  /** The deadline of the owner's side (root on a user's state dir). */
  timeout: string;
  fromOtherSource?: boolean;
}

/** `agyctl restore`'s flags checked once (handler.ts): the restore's options, and what acts around it. */
export interface RestoreCommandOptions extends RestoreOptions {
  /** A snapshot directory, or an archive (a file, or `-` for stdin). */
  source: { dir: string } | { archive: string };
  dryRun: boolean;
  /** --prove: each server call's deadline while proving the restored sessions; undefined without --prove. */
  proveCallTimeoutMs: number | undefined;
  /** --from-other-source: restore a snapshot of another state dir (source.ts) on purpose. */
  fromOtherSource: boolean;
}
