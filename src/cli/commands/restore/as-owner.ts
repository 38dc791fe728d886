/**
 * Root restoring into a user's state dir: root reads the snapshot or the
 * archive file and streams it, as `backup --archive` writes it, into
 * `agyctl restore --archive -` running as the state dir's owner, which
 * checks every hash again and reports for itself.
 *
 * Root reads only what is root's own (util/os/roots-own.ts): a snapshot dir
 * or archive root owns, on a path only root can change, each file opened
 * without following links and hashed before a byte is streamed. One that
 * belongs to the state dir's owner is that user's to read: the owner's
 * restore opens it itself. Anything else is refused (exit 2).
 */
import fs from 'node:fs';
import { SnapshotMismatch, verifySnapshotFiles, writeArchive } from '../../../backup/archive-write.js';
import { AgyError, EXIT } from '../../../core/errors.js';
import { openRootsOwn, whyNotRootsOwn } from '../../../util/os/roots-own.js';
import { ARCHIVE_SHOWN_VAR, type TreeOwner } from '../../../util/os/tree-owner.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { globalArgv, withOwnerChild } from '../../as-owner.js';
import type { RestoreCommandOptions } from './flags.js';

/** `input.source`: a snapshot directory root reads, or an archive: a file root reads, or `-` (root's stdin, handed over). */
export async function restoreAsOwner(
  io: HandlerIO,
  owner: TreeOwner,
  input: RestoreCommandOptions,
  deadlineMs: number,
): Promise<CommandResult> {
  const reader = whoReads(input.source, owner);
  if (reader === 'owner') return ownerReads(io, owner, input, deadlineMs);
  if (reader === 'root' && 'dir' in input.source) await verifyFirst(input.source.dir, io.ctx.signal);
  const argv = restoreArgs(io, input, ['--archive', '-']);
  const fromStdin = 'archive' in input.source && input.source.archive === '-';
  const shown = 'dir' in input.source ? input.source.dir : input.source.archive;
  const env = fromStdin ? io.ctx.env : { ...io.ctx.env, [ARCHIVE_SHOWN_VAR]: shown };
  const exit = await withOwnerChild(
    owner,
    {
      argv,
      ctx: { ...io.ctx, env },
      opts: io.opts,
      stdin: fromStdin ? 'relay' : 'pipe',
      stdout: 'relay',
      relays: [],
      deadlineMs,
    },
    async (child) => {
      if (fromStdin || !child.stdin) return;
      const stdin = child.stdin;
      stdin.on('error', () => undefined); // the owner's restore refused early: its exit code says why
      try {
        if ('dir' in input.source) await writeArchive(input.source.dir, stdin, io.ctx.signal, openRootsOwn);
        else if (typeof reader === 'number') await pipeFile(reader, stdin);
      } catch (err) {
        // The owner's side gets a cut-off archive and restores nothing; say why here.
        if (!stdin.destroyed) io.out.warn(`reading ${shown} failed: ${(err as Error).message}`);
      } finally {
        stdin.end();
      }
    },
  );
  return { exit, written: true };
}

/** The owner's args for the source: every option restoreAsOwner passes, with the snapshot dir or archive path itself. */
function restoreArgs(io: HandlerIO, input: RestoreCommandOptions, from?: string[]): string[] {
  return [
    ...globalArgv(io.opts),
    'restore',
    ...(from ?? ('dir' in input.source ? [input.source.dir] : ['--archive', input.source.archive])),
    ...input.sessionIds.flatMap((id) => ['--session', id]),
    ...(input.force ? ['--force'] : []),
    ...(input.dryRun ? ['--dry-run'] : []),
    ...(input.fromOtherSource ? ['--from-other-source'] : []),
    ...(input.proveCallTimeoutMs === undefined ? [] : ['--prove', '--prove-timeout', `${input.proveCallTimeoutMs}ms`]),
  ];
}

/** Root's own snapshot, every file hashed before the owner's side gets a byte: a link or another's file is refused (2), a mismatch is damage (6). */
async function verifyFirst(dir: string, signal: AbortSignal): Promise<void> {
  try {
    await verifySnapshotFiles(dir, openRootsOwn, signal);
  } catch (err) {
    if (err instanceof SnapshotMismatch)
      throw new AgyError(
        EXIT.findings,
        'snapshot-damaged',
        `The snapshot is damaged: ${err.message}; nothing was restored.`,
        {
          hint: `restore from another snapshot; agyctl backup verify ${dir} names every damaged file`,
          details: { snapshot: dir },
        },
      );
    if (err instanceof AgyError || (err as NodeJS.ErrnoException).code !== undefined || signal.aborted) throw err;
    throw notRootsOwn(dir, (err as Error).message);
  }
}

/** A snapshot dir or archive of the state dir's owner: the owner's restore reads it itself, as that user. */
async function ownerReads(
  io: HandlerIO,
  owner: TreeOwner,
  input: RestoreCommandOptions,
  deadlineMs: number,
): Promise<CommandResult> {
  const exit = await withOwnerChild(
    owner,
    {
      argv: restoreArgs(io, input),
      ctx: io.ctx,
      opts: io.opts,
      stdin: 'ignore',
      stdout: 'relay',
      relays: [],
      deadlineMs,
    },
    () => Promise.resolve(),
  );
  return { exit, written: true };
}

/**
 * Who reads the source: 'root' (root's own snapshot dir), an open archive
 * file root's own (its descriptor), 'stdin', or 'owner' (it is the state dir
 * owner's). Throws (exit 2) for a link, a FIFO or anything else, or another
 * user's file, before anything is read.
 */
function whoReads(source: RestoreCommandOptions['source'], owner: TreeOwner): 'root' | 'owner' | 'stdin' | number {
  if ('archive' in source && source.archive === '-') return 'stdin';
  const target = 'dir' in source ? source.dir : source.archive;
  const st = fs.lstatSync(target);
  if ('archive' in source && !st.isFile()) throw notRootsOwn(target, `${target} is ${kindOf(st)}, not a regular file`);
  if (st.uid === owner.uid && !st.isSymbolicLink()) return 'owner';
  const why = whyNotRootsOwn(target);
  if (why !== undefined) throw notRootsOwn(target, why);
  if ('dir' in source) return 'root';
  const fd = fs.openSync(target, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  const held = fs.fstatSync(fd);
  if (!held.isFile() || held.ino !== st.ino || held.dev !== st.dev) {
    fs.closeSync(fd);
    throw notRootsOwn(target, `${target} changed while agyctl opened it`);
  }
  return fd;
}

function kindOf(st: fs.Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a directory';
  return 'not a regular file';
}

function notRootsOwn(target: string, why: string): AgyError {
  return new AgyError(
    EXIT.usage,
    'restore-source-not-roots',
    `Root reads for another user only what is root's own, and ${why}; nothing was restored.`,
    {
      hint: `copy ${target} into a directory only root can write (cp -a, or install -m 600 for an archive) and restore from there, or pipe it in: --archive - < FILE`,
      details: { path: target },
    },
  );
}

function pipeFile(fd: number, to: NodeJS.WritableStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const from = fs.createReadStream('', { fd });
    from.once('error', reject);
    from.once('end', resolve);
    from.pipe(to, { end: false });
  });
}
