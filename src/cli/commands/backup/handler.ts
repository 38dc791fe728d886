/** The handlers behind `backup`, `backup verify` and `restore`: options in, report out, exit code decided. */
import path from 'node:path';
import type { CommandIO, CommandResult } from '../../context.js';
import { parseCountOption, parseDurationOption } from '../../parse-options.js';
import { EXIT, usageError } from '../../../core/errors.js';
import { defaultBackupDir, expandTilde } from '../../../core/paths.js';
import { renderBackup, renderRestore, renderVerify, backupJson, noConversationsBackup } from './render.js';
import { noConversationsYet } from '../../../backup/discover.js';
import { resolveSnapshot } from '../../../backup/resolve-snapshot.js';
import type { RetentionPolicy } from '../../../backup/retention.js';
import { withFsErrors, type FsErrorContext } from '../../../util/fs-errors.js';

type Opts = Record<string, unknown>;

function dirOption(io: CommandIO, value: unknown): string {
  return typeof value === 'string' ? path.resolve(io.ctx.cwd, expandTilde(value, io.ctx.env)) : defaultBackupDir(io.ctx.env);
}

function retentionFrom(options: Opts): RetentionPolicy {
  const count = (flag: string, v: unknown): number | undefined => (typeof v === 'string' ? parseCountOption(flag, v) : undefined);
  const policy = { keepLast: count('--keep-last', options.keepLast), keepDaily: count('--keep-daily', options.keepDaily), keepWeekly: count('--keep-weekly', options.keepWeekly) };
  const given = Object.values(policy).filter((v) => v !== undefined);
  if (given.length > 0 && given.every((v) => v === 0)) throw usageError('These --keep-* values would delete every snapshot.', 'give at least one --keep-last/--keep-daily/--keep-weekly above 0');
  return policy;
}

/** Backup, verify and restore name their two directories in file-system errors; backup's full destination is backup-write-failed (6). */
function fsContext(io: CommandIO, backupDir: string, flag: string, writes: { to?: string; fullCode?: string } = {}): FsErrorContext {
  return {
    roots: [
      { dir: backupDir, role: 'the backup directory', also: `or choose another one with ${flag} DIR` },
      { dir: io.opts.stateDir, role: 'the state dir', also: 'or point --state-dir (AGYCTL_STATE_DIR) at the right directory' },
    ],
    // Writes through a descriptor carry no path: name the directory this command writes into.
    ...(writes.to === undefined ? {} : { defaultPath: writes.to }),
    ...(writes.fullCode === undefined ? {} : { fullCode: writes.fullCode }),
  };
}

export function backupCommand(io: CommandIO, options: Opts): Promise<CommandResult> {
  const backupDir = dirOption(io, options.to);
  return withFsErrors(fsContext(io, backupDir, '--to', { to: backupDir, fullCode: 'backup-write-failed' }), () => backupRun(io, options));
}

async function backupRun(io: CommandIO, options: Opts): Promise<CommandResult> {
  const retention = retentionFrom(options);
  const busyBudgetMs = parseDurationOption('--busy-timeout', options.busyTimeout as string);
  const sessionIds = (options.session as string[] | undefined) ?? [];
  if (sessionIds.length === 0 && noConversationsYet(io.opts.stateDir)) {
    const fresh = noConversationsBackup(io.opts.stateDir, dirOption(io, options.to));
    if (!io.opts.json) for (const line of fresh.lines) io.out.print(line);
    return { exit: EXIT.ok, data: fresh.json };
  }
  if (options.dryRun) {
    const { dryRunBackup, renderDryRun } = await import('../../../backup/dry-run.js');
    const report = dryRunBackup({ stateDir: io.opts.stateDir, backupDir: dirOption(io, options.to), sessionIds, retention });
    if (!io.opts.json) for (const line of renderDryRun(report)) io.out.print(line);
    return { exit: EXIT.ok, data: { ...report } };
  }
  const { runBackup } = await import('../../../backup/run-backup.js');
  const report = await runBackup({ stateDir: io.opts.stateDir, backupDir: dirOption(io, options.to), sessionIds, retention, busyBudgetMs, signal: io.ctx.signal, out: io.out });
  if (!io.opts.json) for (const line of renderBackup(report)) io.out.print(line);
  return { exit: report.failed.length > 0 ? EXIT.findings : EXIT.ok, data: backupJson(report) };
}

export function verifyCommand(io: CommandIO, snapshot: string, options: Opts): Promise<CommandResult> {
  return withFsErrors(fsContext(io, dirOption(io, options.from), '--from'), () => verifyRun(io, snapshot, options));
}

async function verifyRun(io: CommandIO, snapshot: string, options: Opts): Promise<CommandResult> {
  const dir = resolveSnapshot(snapshot, dirOption(io, options.from), io.ctx.cwd);
  const { verifySnapshot } = await import('../../../backup/verify.js');
  const { ManifestError, manifestAgyError } = await import('../../../backup/manifest.js');
  let report;
  try {
    report = verifySnapshot(dir);
  } catch (err) {
    if (err instanceof ManifestError) throw manifestAgyError(err, dir);
    throw err;
  }
  if (!io.opts.json) for (const line of renderVerify(report)) io.out.print(line);
  return { exit: report.ok ? EXIT.ok : EXIT.findings, data: { verify: report } };
}

export function restoreCommand(io: CommandIO, snapshot: string, options: Opts): Promise<CommandResult> {
  return withFsErrors(fsContext(io, dirOption(io, options.from), '--from', { to: io.opts.stateDir }), () => restoreRun(io, snapshot, options));
}

async function restoreRun(io: CommandIO, snapshot: string, options: Opts): Promise<CommandResult> {
  const dir = resolveSnapshot(snapshot, dirOption(io, options.from), io.ctx.cwd);
  const { runRestore } = await import('../../../backup/restore.js');
  const report = await runRestore({ snapshotDir: dir, stateDir: io.opts.stateDir, sessionIds: (options.session as string[] | undefined) ?? [], force: Boolean(options.force), signal: io.ctx.signal, out: io.out });
  if (!io.opts.json) for (const line of renderRestore(report)) io.out.print(line);
  return { exit: report.sessions.every((s) => s.restored) ? EXIT.ok : EXIT.findings, data: { restore: report } };
}
