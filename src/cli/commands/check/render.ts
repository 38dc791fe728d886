/** Human output: one line per check (mark, id, finding, time), the fix under a failure, then the status. */

import { EXIT_FOR } from '../../../check/status.js';
import type { CheckResult, Status } from '../../../check/types.js';
import type { Palette } from '../../../core/io.js';

function mark(c: CheckResult, color: Palette): string {
  if (c.ok) return color.green('✓');
  if (c.decidedBy === 'live') return color.dim('i');
  return c.severity === 'error' ? color.red('✗') : color.yellow('!');
}

export function renderChecks(checks: readonly CheckResult[], status: Status, color: Palette): string[] {
  const width = Math.max(...checks.map((c) => c.id.length), 8);
  const lines: string[] = [];
  for (const c of checks) {
    lines.push(`${mark(c, color)} ${c.id.padEnd(width)}  ${c.message} ${color.dim(`(${c.ms}ms)`)}`);
    if (!c.ok && c.hint && c.decidedBy !== 'live')
      lines.push(`  ${' '.repeat(width)}  ${color.bold('fix:')} ${c.hint}`);
  }
  const exit = EXIT_FOR[status];
  lines.push(status === 'ok' ? `status: ${color.green('ok')}` : `status: ${color.red(status)} (exit ${exit})`);
  return lines;
}

/** The JSON form of a check: the internal failure class stays internal. */
export function publicCheck({
  failure: _failure,
  liveNote: _note,
  ...rest
}: CheckResult): Omit<CheckResult, 'failure' | 'liveNote'> {
  return rest;
}
