/**
 * The handler side of `--prove`: server start options from the global
 * options (the box's server command, settings and credentials), then
 * src/backup/prove-snapshot.ts against the live state dir (`restore --prove`)
 * or a scratch copy (`backup verify --prove`, `backup --prove`).
 */

import { type ProveOptions, proveInScratch, proveRestored } from '../../../backup/prove-snapshot.js';
import type { ProveReport } from '../../../backup/replay-proof.js';
import { usageError } from '../../../core/errors.js';
import type { CommandIO } from '../../../core/io.js';
import { tempRoot } from '../../../core/paths.js';
import { serverStartOptions } from '../../../profiles/server-start.js';
import type { HandlerIO } from '../../action.js';
import { parseDurationOption } from '../../parse-options.js';
import { sayBackupEvents } from './progress.js';

/** The flags every --prove command shares. */
export interface ProveFlags {
  proveTimeout?: string | undefined;
}

const DEFAULT_CALL_TIMEOUT = '60s';

function assertAntigravity(io: CommandIO): void {
  if (io.opts.profile && io.opts.profile !== 'antigravity')
    throw usageError(
      `--prove loads sessions in antigravity-acp; the ${io.opts.profile} profile keeps no such conversations.`,
    );
}

/** --prove's flags, checked once before anything runs (a bad --prove-timeout costs no backup or restore): each server call's deadline. */
export function proveCallTimeout(io: CommandIO, flags: ProveFlags): number {
  assertAntigravity(io);
  return parseDurationOption('--prove-timeout', flags.proveTimeout ?? DEFAULT_CALL_TIMEOUT);
}

/** What proving `snapshotDir` takes: the checked deadline, the box's server command, and the run's signal, and its events said on stderr. */
export function proveOptions(io: CommandIO, snapshotDir: string, callTimeoutMs: number): ProveOptions {
  assertAntigravity(io);
  return {
    snapshotDir,
    stateDir: io.opts.stateDir,
    startFor: (stateDir) => serverStartOptions({ ...io, opts: { ...io.opts, stateDir } }),
    callTimeoutMs,
    signal: io.ctx.signal,
    fallbackCwd: io.ctx.cwd,
    emit: sayBackupEvents(io.out),
  };
}

/** `restore --prove`: a fresh server on the box's own state dir loads every restored session. */
export function proveRestoredSessions(opts: ProveOptions, ids: string[]): Promise<ProveReport> {
  return proveRestored(opts, ids);
}

/** `backup verify --prove`: the snapshot restored into a scratch state dir that gets private copies of the box's settings and token. */
export function proveSnapshot(io: CommandIO, opts: ProveOptions): Promise<ProveReport> {
  return proveInScratch(opts, tempRoot(io.ctx.env));
}

/** `backup --prove`: the new snapshot proven in a scratch copy, its lines shown the way the run's own are (`say`). */
export async function proveNewSnapshot(
  io: HandlerIO,
  snapshotDir: string,
  callTimeoutMs: number,
  say: (line: string) => void,
): Promise<ProveReport> {
  const report = await proveSnapshot(io, proveOptions(io, snapshotDir, callTimeoutMs));
  if (!io.opts.json) for (const line of renderProve(report)) say(line);
  return report;
}

/** Human lines of a proof (`backup --prove`, `backup verify --prove`, `restore --prove`); --json carries the report as is. */
export function renderProve(p: ProveReport): string[] {
  const lines = [
    `${p.ok ? 'proved' : 'NOT proved'}: a fresh server loaded ${p.sessions.filter((s) => s.loaded).length}/${p.sessions.length} session(s)${p.scratch ? ' from a scratch copy' : ''}`,
  ];
  for (const s of p.sessions) {
    const counts = `${s.replayed?.user ?? 0} user and ${s.replayed?.agent ?? 0} agent messages`;
    if (!s.ok) lines.push(`  FAILED   ${s.id}: ${s.problem}`);
    else if (s.history === 'empty') lines.push(`  empty    ${s.id}: loaded, replayed no messages (nothing to compare)`);
    else if (s.history === 'identical')
      lines.push(`  ok       ${s.id}: replayed ${counts}, identical to the recorded replay`);
    else lines.push(`  ok       ${s.id}: loaded, replayed ${counts}`);
  }
  for (const note of p.notes) lines.push(`  ${note}`);
  if (p.replay.written)
    lines.push(`  replay recorded in ${p.replay.written.file} (${p.replay.written.sessions} session(s))`);
  return lines;
}
