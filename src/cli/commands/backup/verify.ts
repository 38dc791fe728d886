/** `agyctl backup verify SNAPSHOT [--prove]`: its flags checked once into VerifyOptions, the report out, the exit code decided. */

import { resolveSnapshot } from '../../../backup/resolve-snapshot.js';
import { sourceOf } from '../../../backup/source.js';
import type { VerifyReport } from '../../../backup/verify.js';
import { EXIT, usageError } from '../../../core/errors.js';
import { expandTilde } from '../../../core/paths.js';
import { withFsErrors } from '../../../util/fs-errors.js';
import { sanitizeForTerminal } from '../../../util/terminal-text.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import type { VerifyFlags } from './flags.js';
import { dirOption, fsContext } from './handler.js';

/**
 * `backup verify` refuses the options of a backup run instead of ignoring
 * them: `backup verify latest --to DIR` would otherwise verify the default
 * directory's snapshot and say "ok". The backup directory of verify (and of
 * restore and sessions export) is `--from`.
 */
function refuseBackupOnly(flags: string[]): void {
  const flag = flags[0];
  if (!flag) return;
  if (flag === '--to')
    throw usageError(
      '--to is the backup directory a backup run writes to; `backup verify` reads with --from.',
      'agyctl backup verify SNAPSHOT --from DIR',
    );
  throw usageError(
    `${flag} is an option of a backup run, not of \`backup verify\`.`,
    `run it on its own: agyctl backup ${flag} …; then agyctl backup verify SNAPSHOT`,
  );
}

export function verifyCommand(io: HandlerIO, snapshot: string, flags: VerifyFlags): Promise<CommandResult> {
  refuseBackupOnly(flags.backupOnly ?? []);
  return withFsErrors(fsContext(io, dirOption(io, flags.from), '--from'), async () =>
    verifyRun(io, await verifyOptions(io, snapshot, flags)),
  );
}

/** `backup verify`'s flags, checked once: the snapshot it reads, and --prove's deadline, which acts after the check. */
interface VerifyOptions {
  snapshotDir: string;
  /** --prove: each server call's deadline while proving the snapshot; undefined without --prove. */
  proveCallTimeoutMs: number | undefined;
}

/** Every flag checked here, once, before anything is read. */
async function verifyOptions(io: HandlerIO, snapshot: string, flags: VerifyFlags): Promise<VerifyOptions> {
  const snapshotDir = resolveSnapshot(
    expandTilde(snapshot, io.ctx.env),
    dirOption(io, flags.from),
    io.ctx.cwd,
    sourceOf(io.opts.stateDir),
  );
  return {
    snapshotDir,
    proveCallTimeoutMs: flags.prove ? (await import('./prove-handler.js')).proveCallTimeout(io, flags) : undefined,
  };
}

async function verifyRun(io: HandlerIO, options: VerifyOptions): Promise<CommandResult> {
  const { verifySnapshot } = await import('../../../backup/verify.js');
  const { ManifestError, manifestAgyError } = await import('../../../backup/manifest.js');
  let report: ReturnType<typeof verifySnapshot>;
  try {
    report = verifySnapshot(options.snapshotDir);
  } catch (err) {
    if (err instanceof ManifestError) throw manifestAgyError(err, options.snapshotDir);
    throw err;
  }
  if (!io.opts.json) for (const line of renderVerify(report)) io.out.print(line);
  const callTimeoutMs = options.proveCallTimeoutMs;
  if (callTimeoutMs === undefined) return { exit: report.ok ? EXIT.ok : EXIT.findings, data: { verify: report } };
  // A snapshot that fails its hashes is not worth a server start: the mismatch already exits 6.
  const prover = await import('./prove-handler.js');
  const prove = report.ok
    ? await prover.proveSnapshot(io, prover.proveOptions(io, options.snapshotDir, callTimeoutMs))
    : null;
  if (prove && !io.opts.json) for (const line of prover.renderProve(prove)) io.out.print(line);
  return { exit: report.ok && prove?.ok ? EXIT.ok : EXIT.findings, data: { verify: report, prove } };
}

export function renderVerify(r: VerifyReport): string[] {
  const lines = [`${r.ok ? 'ok' : 'MISMATCH'} ${r.snapshot} (${r.sessions.length} session(s), created ${r.created})`];
  for (const s of r.sessions) {
    if (s.ok) lines.push(`  ok       ${s.id}`);
    else for (const p of s.problems) lines.push(`  BAD      ${s.id}: ${p}`);
  }
  for (const f of r.failedAtBackup)
    lines.push(`  missing  ${f.id}: the backup run could not snapshot it (${f.reason})`);
  if (r.replay?.problem) lines.push(`  BAD      replay.json: ${r.replay.problem}`);
  else if (r.replay?.note) lines.push(`  note     replay.json: ${r.replay.note}`);
  else if (r.replay) lines.push(`  ok       replay.json: a recorded replay of ${r.replay.sessions} session(s)`);
  // Reasons and names come from a manifest someone else may have written: one line each, no control characters.
  return lines.map((line) => sanitizeForTerminal(line, { singleLine: true }));
}
