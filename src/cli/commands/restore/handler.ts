/** The handler behind `restore`: flags checked once, the restore (or its dry run) run, exit code decided. */
import fs from 'node:fs';
import { type Manifest, readManifest } from '../../../backup/manifest.js';
import { resolveSnapshot } from '../../../backup/resolve-snapshot.js';
import { assertSameSource, sourceOf } from '../../../backup/source.js';
import { AgyError, EXIT, InterruptedError, usageError } from '../../../core/errors.js';
import { expandTilde, resolveUserPath, stateDirProblem, tempRoot } from '../../../core/paths.js';
import { withFsErrors } from '../../../util/fs-errors.js';
import { ARCHIVE_SHOWN_VAR, ownerToBecome } from '../../../util/os/tree-owner.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { parseDurationOption } from '../../parse-options.js';
import { dirOption, fsContext } from '../backup/handler.js';
import { sayBackupEvents } from '../backup/progress.js';
import type { RestoreCommandOptions, RestoreFlags } from './flags.js';
import { renderPlan, renderRestore } from './render.js';

export function restoreCommand(
  io: HandlerIO,
  snapshot: string | undefined,
  flags: RestoreFlags,
): Promise<CommandResult> {
  return withFsErrors(fsContext(io, dirOption(io, flags.from), '--from', { to: io.opts.stateDir }), () =>
    restoreRun(io, restoreOptions(io, snapshot, flags), flags.timeout),
  );
}

/** Every flag checked here, once, before anything is restored. */
function restoreOptions(io: HandlerIO, snapshot: string | undefined, flags: RestoreFlags): RestoreCommandOptions {
  if ((snapshot === undefined) === (flags.archive === undefined))
    throw usageError(
      'Give either a SNAPSHOT or --archive FILE|-, not both or neither.',
      'agyctl restore latest, or agyctl restore --archive agy.tar',
    );
  if (flags.dryRun && flags.prove)
    throw usageError('--dry-run and --prove cannot be combined: a dry run restores nothing to prove.');
  // A missing state dir is made by the restore; one that is a file is said before `latest` looks for its snapshots.
  const problem = stateDirProblem(io.opts.stateDir);
  if (problem?.code === 'fs-not-a-directory') throw problem;
  const common = {
    stateDir: io.opts.stateDir,
    sessionIds: flags.session ?? [],
    force: flags.force === true,
    dryRun: flags.dryRun === true,
    proveCallTimeoutMs: flags.prove ? parseDurationOption('--prove-timeout', flags.proveTimeout) : undefined,
    fromOtherSource: flags.fromOtherSource === true,
  };
  if (flags.archive === undefined)
    return {
      ...common,
      source: {
        dir: resolveSnapshot(
          expandTilde(snapshot!, io.ctx.env),
          dirOption(io, flags.from),
          io.ctx.cwd,
          sourceOf(io.opts.stateDir),
          true,
        ),
      },
    };
  const archive = flags.archive === '-' ? '-' : resolveUserPath(io.ctx.cwd, flags.archive, io.ctx.env);
  if (archive !== '-' && !fs.existsSync(archive))
    throw usageError(
      `--archive ${archive} does not exist.`,
      'give the archive file `agyctl backup --archive` wrote, or - for stdin',
    );
  if (archive !== '-' && fs.statSync(archive).isDirectory())
    throw usageError(
      `--archive ${archive} is a directory, not an archive file.`,
      `give the file \`agyctl backup --archive\` wrote (or - for stdin); a snapshot directory is restored with: agyctl restore ${archive}`,
    );
  return { ...common, source: { archive } };
}

async function restoreRun(io: HandlerIO, options: RestoreCommandOptions, timeout: string): Promise<CommandResult> {
  // Root on a user's state dir: the restore itself runs as that user, fed the archive through a pipe.
  const owner = ownerToBecome(options.stateDir);
  if (owner)
    return (await import('./as-owner.js')).restoreAsOwner(
      io,
      owner,
      options,
      parseDurationOption('--timeout', timeout),
    );
  if ('dir' in options.source) return restoreFrom(io, options.source.dir, options);
  const archive = options.source.archive;
  const { withArchiveSnapshot } = await import('../../../backup/archive-restore.js');
  const { ArchiveError } = await import('../../../backup/archive-read.js');
  try {
    return await withArchiveSnapshot(archive, io.ctx, (dir) => restoreFrom(io, dir, options, archive));
  } catch (err) {
    if (err instanceof ArchiveError) {
      throw new AgyError(
        EXIT.findings,
        'archive-damaged',
        `The archive was rejected; nothing was restored: ${err.message}.`,
        {
          hint: 'check that it is a whole `agyctl backup --archive` stream (restic dump / rclone cat of the same file)',
        },
      );
    }
    const { ManifestError, manifestAgyError } = await import('../../../backup/manifest.js');
    if (err instanceof ManifestError) throw manifestAgyError(err, archive);
    if (io.ctx.signal.aborted) throw new InterruptedError();
    throw err;
  }
}

/** A snapshot of another state dir is refused (exit 2) unless --from-other-source; a manifest that cannot be read is the restore's to report. */
function assertSnapshotOfThis(io: HandlerIO, dir: string, options: RestoreCommandOptions, archive?: string): void {
  let manifest: Manifest;
  try {
    manifest = readManifest(dir);
  } catch {
    return;
  }
  const shown =
    archive === undefined ? dir : archive === '-' ? (io.ctx.env[ARCHIVE_SHOWN_VAR] ?? 'the archive on stdin') : archive;
  assertSameSource(manifest, sourceOf(options.stateDir), shown, options.fromOtherSource === true);
}

async function restoreFrom(
  io: HandlerIO,
  dir: string,
  options: RestoreCommandOptions,
  archive?: string,
): Promise<CommandResult> {
  const { runRestore, selectSessions } = await import('../../../backup/restore.js');
  assertSnapshotOfThis(io, dir, options, archive);
  if (options.dryRun) {
    const { planRestore } = await import('../../../backup/restore-plan.js');
    const shown = archive === '-' ? io.ctx.env[ARCHIVE_SHOWN_VAR] : undefined;
    const plan = planRestore(options, {
      snapshotDir: dir,
      shown: shown ?? (archive === '-' ? 'the archive on stdin' : (archive ?? dir)),
      sessions: selectSessions(dir, options.sessionIds),
      tmpRoot: tempRoot(io.ctx.env),
    });
    if (!io.opts.json) for (const line of renderPlan(plan)) io.out.print(line);
    // The exit a real restore would have: 6 when it would refuse or find the snapshot damaged.
    return { exit: plan.damaged.length > 0 || plan.wouldRefuse ? EXIT.findings : EXIT.ok, data: { restorePlan: plan } };
  }
  // --prove's options are checked before anything is restored.
  const callTimeoutMs = options.proveCallTimeoutMs;
  const prover = callTimeoutMs === undefined ? undefined : await import('../backup/prove-handler.js');
  const proveWith = callTimeoutMs === undefined ? undefined : prover?.proveOptions(io, dir, callTimeoutMs);
  const report = await runRestore(options, { snapshotDir: dir, signal: io.ctx.signal, emit: sayBackupEvents(io.out) });
  if (archive) report.snapshot = (archive === '-' ? io.ctx.env[ARCHIVE_SHOWN_VAR] : undefined) ?? archive;
  if (!io.opts.json) for (const line of renderRestore(report)) io.out.print(line);
  const restoredOk = report.sessions.every((s) => s.restored);
  if (!prover || !proveWith) return { exit: restoredOk ? EXIT.ok : EXIT.findings, data: { restore: report } };
  const prove = await prover.proveRestoredSessions(
    proveWith,
    report.sessions.filter((s) => s.restored).map((s) => s.id),
  );
  if (!io.opts.json) for (const line of prover.renderProve(prove)) io.out.print(line);
  return { exit: restoredOk && prove.ok ? EXIT.ok : EXIT.findings, data: { restore: report, prove } };
}
