/**
 * Root restoring into a user's state dir: root reads the snapshot (root's
 * backup dir) or the archive file and streams it, as `backup --archive`
 * writes it, into `agyctl restore --archive -` running as the state dir's
 * owner. Root opens nothing in the user's tree; the owner's restore checks
 * every hash before it writes, and reports for itself.
 */
import fs from 'node:fs';
import { writeArchive } from '../../../backup/archive-write.js';
import type { RestoreOptions } from '../../../backup/restore.js';
import { ARCHIVE_SHOWN_VAR, type TreeOwner } from '../../../util/os/tree-owner.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { globalArgv, withOwnerChild } from '../../as-owner.js';

/** `input.source`: a snapshot directory root reads, or an archive: a file root reads, or `-` (root's stdin, handed over). */
export async function restoreAsOwner(io: HandlerIO, owner: TreeOwner, input: RestoreOptions): Promise<CommandResult> {
  const argv = [
    ...globalArgv(io.opts),
    'restore',
    '--archive',
    '-',
    ...input.sessionIds.flatMap((id) => ['--session', id]),
    ...(input.force ? ['--force'] : []),
    ...(input.dryRun ? ['--dry-run'] : []),
    ...(input.fromOtherSource ? ['--from-other-source'] : []),
    ...(input.proveCallTimeoutMs === undefined ? [] : ['--prove', '--prove-timeout', `${input.proveCallTimeoutMs}ms`]),
  ];
  const fromStdin = 'archive' in input.source && input.source.archive === '-';
  const shown = 'dir' in input.source ? input.source.dir : input.source.archive;
  const env = fromStdin ? io.ctx.env : { ...io.ctx.env, [ARCHIVE_SHOWN_VAR]: shown };
  const exit = await withOwnerChild(
    owner,
    {
      argv,
      ctx: { ...io.ctx, env },
      opts: io.opts,
      stdin: fromStdin ? 'inherit' : 'pipe',
      stdout: 'inherit',
      relays: [],
    },
    async (child) => {
      if (fromStdin || !child.stdin) return;
      const stdin = child.stdin;
      stdin.on('error', () => undefined); // the owner's restore refused early: its exit code says why
      try {
        if ('dir' in input.source) await writeArchive(input.source.dir, stdin, io.ctx.signal);
        else await pipeFile(input.source.archive, stdin);
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

function pipeFile(file: string, to: NodeJS.WritableStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const from = fs.createReadStream(file);
    from.once('error', reject);
    from.once('end', resolve);
    from.pipe(to, { end: false });
  });
}
