/** `agyctl sessions export`: flags checked once, then src/backup/export-sessions.ts; human lines here. */
import fs from 'node:fs';
import type { ExportFormat } from '../../../backup/export-format.js';
import type { ExportOptions, ExportReport, ExportSource, ExportTarget } from '../../../backup/export-sessions.js';
import { EXIT, InterruptedError, usageError } from '../../../core/errors.js';
import { defaultBackupDir, expandTilde, resolveUserPath, tempRoot } from '../../../core/paths.js';
import { mkdirsSayingWhy } from '../../../util/os/safe-fs.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';
import { parseDurationOption } from '../../parse-options.js';
import { Progress, sayBackupEvents } from '../backup/progress.js';

export interface ExportFlags {
  session?: string[] | undefined;
  format?: string | undefined;
  out?: string | undefined;
  from?: string | undefined;
  busyTimeout?: string | undefined;
  loadTimeout?: string | undefined;
}

function formatOf(value: string | undefined): ExportFormat {
  if (value === undefined || value === 'md' || value === 'markdown') return 'md';
  if (value === 'jsonl') return 'jsonl';
  throw usageError(`--format must be md or jsonl (got ${JSON.stringify(value)}).`, 'md for people, jsonl for tools');
}

function targetOf(io: HandlerIO, value: string | undefined): ExportTarget {
  if (value === '-') {
    if (io.opts.json)
      throw usageError(
        '--json cannot be used with --out -: stdout carries the export.',
        'give --out DIR with --json, or leave out --json',
      );
    return { kind: 'stdout', stream: io.ctx.stdout };
  }
  const dir = resolveUserPath(io.ctx.cwd, value ?? '.', io.ctx.env);
  const st = fs.statSync(dir, { throwIfNoEntry: false });
  // As `backup --to` does: a missing directory is created, private (the transcripts are the conversations).
  if (!st) mkdirsSayingWhy(dir);
  else if (!st.isDirectory())
    throw usageError(
      `--out ${dir} is not a directory.`,
      'give a directory (created if missing), or --out - for stdout',
    );
  return { kind: 'dir', dir };
}

/** Every flag checked here, once, before anything is copied or started. */
async function exportOptions(io: HandlerIO, snapshot: string | undefined, flags: ExportFlags): Promise<ExportOptions> {
  const format = formatOf(flags.format);
  const target = targetOf(io, flags.out);
  const callTimeoutMs = parseDurationOption('--load-timeout', flags.loadTimeout ?? '60s');
  const busyBudgetMs = parseDurationOption('--busy-timeout', flags.busyTimeout ?? '10s');
  let source: ExportSource = { kind: 'live' };
  if (snapshot !== undefined) {
    const { resolveSnapshot } = await import('../../../backup/resolve-snapshot.js');
    const from = flags.from ? resolveUserPath(io.ctx.cwd, flags.from, io.ctx.env) : defaultBackupDir(io.ctx.env);
    source = {
      kind: 'snapshot',
      dir: resolveSnapshot(
        expandTilde(snapshot, io.ctx.env),
        from,
        io.ctx.cwd,
        (await import('../../../backup/source.js')).sourceOf(io.opts.stateDir),
      ),
    };
  }
  const sessionIds = flags.session ?? [];
  return { source, stateDir: io.opts.stateDir, sessionIds, format, target, busyBudgetMs, callTimeoutMs };
}

export async function exportCommand(
  io: HandlerIO,
  { args, options }: HandlerArgs<ExportFlags>,
): Promise<CommandResult> {
  (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'sessions');
  if (io.opts.profile && io.opts.profile !== 'antigravity')
    throw usageError(
      `sessions export replays antigravity-acp conversations; the ${io.opts.profile} profile keeps none.`,
    );
  const checked = await exportOptions(io, args[0] as string | undefined, options);
  const { target } = checked;
  const { exportSessions } = await import('../../../backup/export-sessions.js');
  const { serverStartOptions } = await import('../../../profiles/server-start.js');
  let report: ExportReport;
  try {
    report = await exportSessions(checked, {
      tmpRoot: tempRoot(io.ctx.env),
      startFor: (stateDir) => serverStartOptions({ ...io, opts: { ...io.opts, stateDir } }),
      signal: io.ctx.signal,
      fallbackCwd: io.ctx.cwd,
      emit: sayBackupEvents(io.out),
      onProgress: progressLine(io),
      progress: (sessions, bytes) => new Progress(io.out, sessions, bytes),
    });
  } catch (err) {
    // A transcript appears only whole (a temporary, then its name), and the scratch copy and server are gone.
    if (io.ctx.signal.aborted)
      throw new InterruptedError(
        `Interrupted: nothing partial was left${target.kind === 'dir' ? ` in ${target.dir} (transcripts finished before Ctrl-C are complete)` : ''}.`,
      );
    throw err;
  } finally {
    io.out.clearStatus();
  }
  // With --out - stdout carries the export: the summary goes to stderr.
  const say = target.kind === 'stdout' ? (line: string) => io.out.info(line) : (line: string) => io.out.print(line);
  if (!io.opts.json) for (const line of renderExport(report)) say(line);
  return { exit: report.failed.length > 0 ? EXIT.findings : EXIT.ok, data: { export: report } };
}

function renderExport(r: ExportReport): string[] {
  const lines = [
    `exported ${r.sessions.length} session(s) from ${r.source === 'live' ? 'the live state dir (a consistent copy)' : r.source} to ${r.out === '-' ? 'stdout' : r.out}`,
  ];
  for (const s of r.sessions) lines.push(`  ${s.id}  ${s.messages} message(s)${s.file ? `  ${s.file}` : ''}`);
  for (const f of r.failed) lines.push(`  FAILED ${f.id}: ${f.reason}`);
  for (const n of r.notes) lines.push(`  ${n}`);
  return lines;
}

/** The export's progress on the terminal's status line: every phase, and a replay's message count at most ten times a second. */
function progressLine(io: HandlerIO): (what: string) => void {
  let last = 0;
  let phase = '';
  return (what) => {
    const now = Date.now();
    const head = what.split(':')[0]!;
    if (head === phase && now - last < 100) return;
    phase = head;
    last = now;
    io.out.status(what);
  };
}
