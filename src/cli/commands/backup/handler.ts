/** The handlers behind `backup`, `backup verify` and `restore`: options in, report out, exit code decided. */
import fs from 'node:fs';
import path from 'node:path';
import { noConversationsYet } from '../../../backup/discover.js';
import { errorText } from '../../../backup/files.js';
import { renderPlan, renderProve } from '../../../backup/render-restore.js';
import { resolveSnapshot } from '../../../backup/resolve-snapshot.js';
import type { RetentionPolicy } from '../../../backup/retention.js';
import type { BackupReport } from '../../../backup/run-backup.js';
import { AgyError, EXIT, InterruptedError, usageError } from '../../../core/errors.js';
import { defaultBackupDir, expandTilde, tempRoot } from '../../../core/paths.js';
import { type FsErrorContext, withFsErrors } from '../../../util/fs-errors.js';
import type { CommandIO, CommandResult } from '../../context.js';
import { parseCountOption, parseDurationOption } from '../../parse-options.js';
import type { ProveFlags } from './prove-handler.js';
import { backupJson, noConversationsBackup, renderBackup, renderRestore, renderVerify } from './render.js';

type Opts = Record<string, unknown>;

function dirOption(io: CommandIO, value: unknown): string {
  return typeof value === 'string'
    ? path.resolve(io.ctx.cwd, expandTilde(value, io.ctx.env))
    : defaultBackupDir(io.ctx.env);
}

function retentionFrom(options: Opts): RetentionPolicy {
  const count = (flag: string, v: unknown): number | undefined =>
    typeof v === 'string' ? parseCountOption(flag, v) : undefined;
  const policy = {
    keepLast: count('--keep-last', options.keepLast),
    keepDaily: count('--keep-daily', options.keepDaily),
    keepWeekly: count('--keep-weekly', options.keepWeekly),
  };
  const given = Object.values(policy).filter((v) => v !== undefined);
  if (given.length > 0 && given.every((v) => v === 0))
    throw usageError(
      'These --keep-* values would delete every snapshot.',
      'give at least one --keep-last/--keep-daily/--keep-weekly above 0',
    );
  return policy;
}

function jobsOption(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const n = parseCountOption('--jobs', value);
  if (n < 1 || n > 64)
    throw usageError(`--jobs must be between 1 and 64 (got ${n}).`, 'the default, one per core, is usually right');
  return n;
}

/** Backup, verify and restore name their two directories in file-system errors; backup's full destination is backup-write-failed (6). */
function fsContext(
  io: CommandIO,
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

export function backupCommand(io: CommandIO, options: Opts): Promise<CommandResult> {
  const backupDir = dirOption(io, options.to);
  return withFsErrors(fsContext(io, backupDir, '--to', { to: backupDir, fullCode: 'backup-write-failed' }), () =>
    backupRun(io, options),
  );
}

async function backupRun(io: CommandIO, options: Opts): Promise<CommandResult> {
  const retention = retentionFrom(options);
  const sessionIds = (options.session as string[] | undefined) ?? [];
  if (sessionIds.length === 0 && noConversationsYet(io.opts.stateDir)) {
    const fresh = noConversationsBackup(io.opts.stateDir, dirOption(io, options.to));
    if (!io.opts.json) for (const line of fresh.lines) io.out.print(line);
    return { exit: EXIT.ok, data: fresh.json };
  }
  if (options.dryRun && options.prove)
    throw usageError('--dry-run and --prove cannot be combined: a dry run writes no snapshot to prove.');
  if (options.dryRun) {
    const { dryRunBackup, renderDryRun } = await import('../../../backup/dry-run.js');
    const report = dryRunBackup({
      stateDir: io.opts.stateDir,
      backupDir: dirOption(io, options.to),
      sessionIds,
      retention,
    });
    if (!io.opts.json) for (const line of renderDryRun(report)) io.out.print(line);
    return { exit: EXIT.ok, data: { ...report } };
  }
  const busyBudgetMs = parseDurationOption('--busy-timeout', options.busyTimeout as string);
  const jobs = jobsOption(options.jobs);
  const archive = archiveTarget(io, options.archive);
  const prometheus = typeof options.prometheus === 'string' ? path.resolve(io.ctx.cwd, options.prometheus) : undefined;
  if (prometheus) (await import('../../../check/metrics-target.js')).assertMetricsTarget(prometheus);
  const prover = options.prove ? await import('./prove-handler.js') : undefined;
  const proveWith = prover?.proveOptions(io, '', proveFlags(options)); // checked before the run
  const { runBackup } = await import('../../../backup/run-backup.js');
  const started = Date.now();
  let report: Awaited<ReturnType<typeof runBackup>> | undefined;
  try {
    report = await runBackup({
      stateDir: io.opts.stateDir,
      backupDir: dirOption(io, options.to),
      sessionIds,
      retention,
      busyBudgetMs,
      ...(jobs ? { jobs } : {}),
      signal: io.ctx.signal,
      out: io.out,
    });
    if (archive) await shipArchive(io, report.snapshot.path, archive);
  } catch (err) {
    if (prometheus) await writeMetrics(prometheus, report, started, false);
    throw err;
  }
  if (prometheus) await writeMetrics(prometheus, report, started, report.failed.length === 0);
  // With `--archive -` stdout carries only the tar: the summary goes to stderr (and --json was refused).
  const say = archive === '-' ? (line: string) => io.out.info(line) : (line: string) => io.out.print(line);
  if (!io.opts.json) for (const line of renderBackup(report)) say(line);
  const prove =
    prover && proveWith
      ? await prover.proveSnapshot(io, { ...proveWith, snapshotDir: report.snapshot.path })
      : undefined;
  if (prove && !io.opts.json) for (const line of renderProve(prove)) say(line);
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
function archiveTarget(io: CommandIO, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
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
  const file = path.resolve(io.ctx.cwd, expandTilde(value, io.ctx.env));
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
  if (fs.existsSync(file))
    throw usageError(
      `--archive ${file} already exists; agyctl never overwrites it.`,
      'name a new file, e.g. agy-$(date +%F).tar',
    );
  return file;
}

async function shipArchive(io: CommandIO, snapshotDir: string, target: string): Promise<void> {
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

export function verifyCommand(io: CommandIO, snapshot: string, options: Opts): Promise<CommandResult> {
  return withFsErrors(fsContext(io, dirOption(io, options.from), '--from'), () => verifyRun(io, snapshot, options));
}

async function verifyRun(io: CommandIO, snapshot: string, options: Opts): Promise<CommandResult> {
  const dir = resolveSnapshot(snapshot, dirOption(io, options.from), io.ctx.cwd);
  const { verifySnapshot } = await import('../../../backup/verify.js');
  const { ManifestError, manifestAgyError } = await import('../../../backup/manifest.js');
  let report: ReturnType<typeof verifySnapshot>;
  try {
    report = verifySnapshot(dir);
  } catch (err) {
    if (err instanceof ManifestError) throw manifestAgyError(err, dir);
    throw err;
  }
  if (!options.prove) {
    if (!io.opts.json) for (const line of renderVerify(report)) io.out.print(line);
    return { exit: report.ok ? EXIT.ok : EXIT.findings, data: { verify: report } };
  }
  const { proveOptions, proveSnapshot } = await import('./prove-handler.js');
  const opts = proveOptions(io, dir, proveFlags(options));
  if (!io.opts.json) for (const line of renderVerify(report)) io.out.print(line);
  // A snapshot that fails its hashes is not worth a server start: the mismatch already exits 6.
  const prove = report.ok ? await proveSnapshot(io, opts) : null;
  if (prove && !io.opts.json) for (const line of renderProve(prove)) io.out.print(line);
  return { exit: report.ok && prove?.ok ? EXIT.ok : EXIT.findings, data: { verify: report, prove } };
}

const proveFlags = (options: Opts): ProveFlags => ({
  proveTimeout: typeof options.proveTimeout === 'string' ? options.proveTimeout : undefined,
});

export function restoreCommand(io: CommandIO, snapshot: string | undefined, options: Opts): Promise<CommandResult> {
  return withFsErrors(fsContext(io, dirOption(io, options.from), '--from', { to: io.opts.stateDir }), () =>
    restoreRun(io, snapshot, options),
  );
}

async function restoreRun(io: CommandIO, snapshot: string | undefined, options: Opts): Promise<CommandResult> {
  const archive = typeof options.archive === 'string' ? options.archive : undefined;
  if ((snapshot === undefined) === (archive === undefined))
    throw usageError(
      'Give either a SNAPSHOT or --archive FILE|-, not both or neither.',
      'agyctl restore latest, or agyctl restore --archive agy.tar',
    );
  if (options.dryRun && options.prove)
    throw usageError('--dry-run and --prove cannot be combined: a dry run restores nothing to prove.');
  if (archive === undefined)
    return restoreFrom(io, resolveSnapshot(snapshot!, dirOption(io, options.from), io.ctx.cwd), options);
  const source = archive === '-' ? '-' : path.resolve(io.ctx.cwd, expandTilde(archive, io.ctx.env));
  if (source !== '-' && !fs.existsSync(source))
    throw usageError(
      `--archive ${source} does not exist.`,
      'give the archive file `agyctl backup --archive` wrote, or - for stdin',
    );
  const { withArchiveSnapshot } = await import('../../../backup/archive-restore.js');
  const { ArchiveError } = await import('../../../backup/archive-read.js');
  try {
    return await withArchiveSnapshot(source, io.ctx.stdin, tempRoot(io.ctx.env), io.ctx.signal, (dir) =>
      restoreFrom(io, dir, options, source),
    );
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
    if (io.ctx.signal.aborted) throw new InterruptedError();
    throw err;
  }
}

async function restoreFrom(io: CommandIO, dir: string, options: Opts, archive?: string): Promise<CommandResult> {
  const sessionIds = (options.session as string[] | undefined) ?? [];
  const { runRestore, selectSessions } = await import('../../../backup/restore.js');
  if (options.dryRun) {
    const { planRestore } = await import('../../../backup/restore-plan.js');
    const plan = planRestore(
      archive === '-' ? 'the archive on stdin' : (archive ?? dir),
      io.opts.stateDir,
      selectSessions({ snapshotDir: dir, sessionIds }),
      dir,
    );
    if (!io.opts.json) for (const line of renderPlan(plan)) io.out.print(line);
    return { exit: plan.damaged.length > 0 ? EXIT.findings : EXIT.ok, data: { restorePlan: plan } };
  }
  // --prove's options are checked before anything is restored.
  const { proveOptions, proveRestoredSessions } = await import('./prove-handler.js');
  const opts = options.prove ? proveOptions(io, dir, proveFlags(options)) : undefined;
  const report = await runRestore({
    snapshotDir: dir,
    stateDir: io.opts.stateDir,
    sessionIds,
    force: Boolean(options.force),
    signal: io.ctx.signal,
    out: io.out,
    workRoot: tempRoot(io.ctx.env),
  });
  if (archive) report.snapshot = archive;
  if (!io.opts.json) for (const line of renderRestore(report)) io.out.print(line);
  const restoredOk = report.sessions.every((s) => s.restored);
  if (!opts) return { exit: restoredOk ? EXIT.ok : EXIT.findings, data: { restore: report } };
  const prove = await proveRestoredSessions(
    opts,
    report.sessions.filter((s) => s.restored).map((s) => s.id),
  );
  if (!io.opts.json) for (const line of renderProve(prove)) io.out.print(line);
  return { exit: restoredOk && prove.ok ? EXIT.ok : EXIT.findings, data: { restore: report, prove } };
}
