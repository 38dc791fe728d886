/**
 * `agyctl backup`: its flags (BackupFlags) checked once into BackupOptions
 * (src/backup/run-backup.ts), the run (or its dry run), the report rendered, the exit
 * code decided. dirOption and fsContext serve `backup list`, `backup verify` and `restore` too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { noConversationsYet } from '../../../backup/discover.js';
import { errorText } from '../../../backup/error-text.js';
import type { RetentionPolicy } from '../../../backup/retention.js';
import type { BackupReport } from '../../../backup/run-backup.js';
import { keyedBackupDir, sourceOf } from '../../../backup/source.js';
import { AgyError, EXIT, InterruptedError, usageError } from '../../../core/errors.js';
import { defaultBackupDir, resolveUserPath } from '../../../core/paths.js';
import { type FsErrorContext, fsAgyError, withFsErrors } from '../../../util/fs-errors.js';
import { ownerToBecome, treeOwnerUid } from '../../../util/os/tree-owner.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { parseCountOption, parseDurationOption, parseSizeOption } from '../../parse-options.js';
import type { BackupCommandOptions, BackupFlags } from './flags.js';
import { Progress, sayBackupEvents } from './progress.js';
import { backupJson, noConversationsBackup, renderBackup, renderDryRun } from './render.js';

/**
 * --to/--from, or the default backup directory; as root on a state dir in a
 * user's tree, the default's subdirectory for that state dir (source.ts), so
 * `latest`, reuse and retention never mix two users' snapshots.
 */
export function dirOption(io: HandlerIO, value: string | undefined): string {
  if (value !== undefined) return resolveUserPath(io.ctx.cwd, value, io.ctx.env);
  const owner = process.geteuid?.() === 0 ? treeOwnerUid(io.opts.stateDir) : undefined;
  if (owner === undefined) return defaultBackupDir(io.ctx.env);
  return keyedBackupDir(defaultBackupDir(io.ctx.env), { ...sourceOf(io.opts.stateDir), uid: owner });
}

function retentionFrom(flags: BackupFlags): RetentionPolicy {
  const count = (flag: string, v: string | undefined): number | undefined =>
    v === undefined ? undefined : parseCountOption(flag, v);
  const policy = {
    keepLast: count('--keep-last', flags.keepLast),
    keepDaily: count('--keep-daily', flags.keepDaily),
    keepWeekly: count('--keep-weekly', flags.keepWeekly),
  };
  const given = Object.values(policy).filter((v) => v !== undefined);
  if (given.length > 0 && given.every((v) => v === 0))
    throw usageError(
      'These --keep-* values would delete every snapshot.',
      'give at least one --keep-last/--keep-daily/--keep-weekly above 0',
    );
  return policy;
}

function jobsOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = parseCountOption('--jobs', value);
  if (n < 1 || n > 64)
    throw usageError(`--jobs must be between 1 and 64 (got ${n}).`, 'the default, one per core, is usually right');
  return n;
}

/** Backup, verify and restore name their two directories in file-system errors; backup's full destination is backup-write-failed (6). */
export function fsContext(
  io: HandlerIO,
  backupDir: string,
  flag: string,
  writes: { to?: string; fullCode?: string } = {},
): FsErrorContext {
  return {
    roots: [
      { dir: backupDir, role: 'the backup directory', also: `or choose another one with ${flag} DIR` },
      {
        dir: io.opts.stateDir,
        role: 'the state dir',
        also: 'or point --state-dir (AGYCTL_STATE_DIR) at the right directory',
      },
    ],
    // Writes through a descriptor carry no path: name the directory this command writes into.
    ...(writes.to === undefined ? {} : { defaultPath: writes.to }),
    ...(writes.fullCode === undefined ? {} : { fullCode: writes.fullCode }),
  };
}

export async function backupCommand(io: HandlerIO, flags: BackupFlags): Promise<CommandResult> {
  const backupDir = dirOption(io, flags.to);
  try {
    return await withFsErrors(
      fsContext(io, backupDir, '--to', { to: backupDir, fullCode: 'backup-write-failed' }),
      () => backupRun(io, flags),
    );
  } catch (err) {
    // An unfinished snapshot (.partial), archive temporary or proof scratch dir is removed on the way out.
    if (io.ctx.signal.aborted)
      throw new InterruptedError(
        `Interrupted: nothing partial was left (an unfinished snapshot is removed; complete snapshots in ${backupDir} are kept).`,
      );
    throw err;
  }
}

/** --max-bytes' default: 16 GiB. */
const DEFAULT_MAX_BYTES = 16 * 1024 ** 3;

/** Every flag checked here, once, before anything runs: a dry run accepts exactly what a real run accepts. */
async function backupOptions(io: HandlerIO, flags: BackupFlags): Promise<BackupCommandOptions> {
  const options: BackupCommandOptions = {
    stateDir: io.opts.stateDir,
    backupDir: dirOption(io, flags.to),
    sessionIds: flags.session ?? [],
    retention: retentionFrom(flags),
    busyBudgetMs: parseDurationOption('--busy-timeout', flags.busyTimeout),
    compact: flags.compact === true,
    jobs: jobsOption(flags.jobs),
    dryRun: flags.dryRun === true,
    archive: archiveTarget(io, flags.archive),
    prometheus: flags.prometheus === undefined ? undefined : resolveUserPath(io.ctx.cwd, flags.prometheus, io.ctx.env),
    proveCallTimeoutMs: flags.prove ? (await import('./prove-handler.js')).proveCallTimeout(io, flags) : undefined,
    maxBytes: flags.maxBytes === undefined ? DEFAULT_MAX_BYTES : parseSizeOption('--max-bytes', flags.maxBytes),
  };
  if (flags.dryRun && flags.prove)
    throw usageError('--dry-run and --prove cannot be combined: a dry run writes no snapshot to prove.');
  if (flags.prove) (await import('../../../backup/prove-scratch.js')).assertMayBorrow(io.opts.stateDir);
  if (options.prometheus) (await import('../../../check/metrics-target.js')).assertMetricsTarget(options.prometheus);
  return options;
}

function freshBackup(io: HandlerIO, options: BackupCommandOptions): CommandResult {
  const fresh = noConversationsBackup(options.stateDir, options.backupDir);
  if (!io.opts.json) for (const line of fresh.lines) io.out.print(line);
  return { exit: EXIT.ok, data: fresh.json };
}

/** Root's deadline on the snapshot taken as the state dir's owner. */
const ownerDeadline = (flags: BackupFlags): number => parseDurationOption('--timeout', flags.timeout ?? '1h');

async function backupRun(io: HandlerIO, flags: BackupFlags): Promise<CommandResult> {
  const options = await backupOptions(io, flags);
  // Root on a user's state dir: the snapshot is taken as that user and streamed to root's backup dir.
  const owner = ownerToBecome(options.stateDir);
  const fromOwner = owner ? await import('./as-owner.js') : undefined;
  if (!owner && options.sessionIds.length === 0 && noConversationsYet(options.stateDir))
    return freshBackup(io, options);
  if (options.dryRun) {
    const { dryRunBackup } = await import('../../../backup/dry-run.js');
    // Root on a user's state dir: the sessions are read as the owner, by the same child as the real run.
    const sessions =
      owner && fromOwner
        ? await fromOwner.planFromOwner(io, owner, options.sessionIds, ownerDeadline(flags))
        : undefined;
    if (owner && sessions === undefined) return freshBackup(io, options);
    const report = dryRunBackup(options, sessions);
    if (!io.opts.json) for (const line of renderDryRun(report)) io.out.print(line);
    return { exit: EXIT.ok, data: { ...report } };
  }
  const { archive, prometheus } = options;
  const { runBackup } = await import('../../../backup/run-backup.js');
  const started = Date.now();
  let report: BackupReport | undefined;
  try {
    report = await runBackup(options, {
      signal: io.ctx.signal,
      emit: sayBackupEvents(io.out),
      progress: (sessions, bytes) => new Progress(io.out, sessions, bytes),
      ...(owner && fromOwner
        ? { snapshotFrom: fromOwner.snapshotFromOwner(io, owner, options, ownerDeadline(flags)) }
        : {}),
    });
    if (archive) await shipArchive(io, report.snapshot.path, archive);
  } catch (err) {
    if (fromOwner && err instanceof fromOwner.NoConversationsYet) return freshBackup(io, options);
    if (prometheus) await writeMetrics(prometheus, report, started, false);
    throw err;
  }
  if (prometheus) await writeMetrics(prometheus, report, started, report.failed.length === 0);
  // With `--archive -` stdout carries only the tar: the summary goes to stderr (and --json was refused).
  const say = archive === '-' ? (line: string) => io.out.info(line) : (line: string) => io.out.print(line);
  if (!io.opts.json) for (const line of renderBackup(report)) say(line);
  const prove =
    options.proveCallTimeoutMs === undefined
      ? undefined
      : await (await import('./prove-handler.js')).proveNewSnapshot(
          io,
          report.snapshot.path,
          options.proveCallTimeoutMs,
          say,
        );
  return {
    exit: report.failed.length > 0 || prove?.ok === false ? EXIT.findings : EXIT.ok,
    data: {
      ...backupJson(report),
      ...(archive ? { archive } : {}),
      ...(prometheus ? { prometheus } : {}),
      ...(prove ? { prove } : {}),
    },
  };
}

/** `--archive FILE|-`, checked before the run so a bad target costs nothing. */
function archiveTarget(io: HandlerIO, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === '-') {
    if (io.opts.json)
      throw usageError(
        '--json cannot be used with --archive -: stdout carries the tar stream.',
        'use --archive FILE with --json, or --prometheus FILE for monitoring',
      );
    if (io.ctx.stdout.isTTY)
      throw usageError(
        'Refusing to write a tar archive to a terminal.',
        'pipe it: agyctl backup --archive - | restic backup --stdin --stdin-filename agy.tar',
      );
    return '-';
  }
  const file = resolveUserPath(io.ctx.cwd, value, io.ctx.env);
  let dir: fs.Stats | undefined;
  try {
    dir = fs.statSync(path.dirname(file));
  } catch {
    /* reported below */
  }
  if (!dir?.isDirectory())
    throw usageError(
      `--archive ${file}: directory ${path.dirname(file)} does not exist.`,
      'create it, or give --archive - to write to stdout',
    );
  assertWritableDir(path.dirname(file));
  if (fs.existsSync(file))
    throw usageError(
      `--archive ${file} already exists; agyctl never overwrites it.`,
      'name a new file, e.g. agy-$(date +%F).tar',
    );
  return file;
}

/** A read-only place is said before the snapshot is taken, as a missing directory is (exit 2). */
function assertWritableDir(dir: string): void {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (err) {
    throw fsAgyError(err, { defaultPath: dir }) ?? err;
  }
}

async function shipArchive(io: HandlerIO, snapshotDir: string, target: string): Promise<void> {
  const { writeArchive, writeArchiveFile } = await import('../../../backup/archive-write.js');
  try {
    const bytes =
      target === '-'
        ? await writeArchive(snapshotDir, io.ctx.stdout, io.ctx.signal)
        : await writeArchiveFile(snapshotDir, target, io.ctx.signal);
    io.out.verbose(`archive: ${bytes} bytes of files written to ${target === '-' ? 'stdout' : target}`);
  } catch (err) {
    if (io.ctx.signal.aborted) throw new InterruptedError();
    throw new AgyError(
      EXIT.findings,
      'archive-write-failed',
      `The snapshot ${snapshotDir} is complete, but writing its archive to ${target === '-' ? 'stdout' : target} failed: ${errorText(err)}.`,
      {
        hint:
          target === '-'
            ? 'check the command reading the archive (restic, rclone); the snapshot directory itself is kept'
            : 'check the space and permissions there; the snapshot directory itself is kept',
        cause: err,
      },
    );
  }
}

async function writeMetrics(
  file: string,
  report: BackupReport | undefined,
  started: number,
  ok: boolean,
): Promise<void> {
  const { writeBackupMetrics } = await import('../../../backup/backup-metrics.js');
  const reused = report?.sessions.filter((s) => s.reused).length ?? 0;
  writeBackupMetrics(file, {
    ok,
    snapshotted: (report?.sessions.length ?? 0) - reused,
    reused,
    failed: report?.failed.length ?? 0,
    bytes: report?.sessions.reduce((n, s) => n + s.bytes, 0),
    durationMs: Date.now() - started,
    at: Date.now(),
  });
}
