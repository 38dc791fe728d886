/** Human lines for `restore --dry-run` and `--prove` (the --json shapes are documented in docs/json.md). */
import { formatBytes } from './progress.js';
import type { ProveReport } from './prove.js';
import type { RestorePlan } from './restore-plan.js';

export function renderPlan(p: RestorePlan): string[] {
  const lines = [`dry run: restoring ${p.snapshot} into ${p.stateDir} would change nothing yet`];
  for (const s of p.sessions) {
    const sizes =
      s.action === 'replace'
        ? `${formatBytes(s.currentBytes)} now -> ${formatBytes(s.snapshotBytes)}`
        : formatBytes(s.snapshotBytes);
    lines.push(
      `  ${s.action === 'replace' ? 'replace' : 'add    '} ${s.id}  ${sizes}${s.openBy.length > 0 ? `  OPEN BY pid ${s.openBy.join(', ')}` : ''}`,
    );
  }
  for (const k of p.kept) lines.push(`  keep    ${k.id}  ${formatBytes(k.bytes)}`);
  if (p.servers.length > 0)
    lines.push(`  a server runs on this state dir (pid ${p.servers.join(', ')}): stop it before restoring`);
  if (p.wouldRefuse) lines.push('  a real restore would refuse: a process holds a target open');
  for (const d of p.damaged) lines.push(`  DAMAGED ${d}`);
  return lines;
}

export function renderProve(p: ProveReport): string[] {
  const lines = [
    `${p.ok ? 'proved' : 'NOT proved'}: a fresh server loaded ${p.sessions.filter((s) => s.loaded).length}/${p.sessions.length} session(s)${p.scratch ? ' from a scratch copy' : ''}`,
  ];
  for (const s of p.sessions) {
    const counts = `${s.replayed?.user ?? 0} user and ${s.replayed?.agent ?? 0} agent messages`;
    if (!s.ok) lines.push(`  FAILED   ${s.id}: ${s.problem}`);
    else if (s.history === 'identical')
      lines.push(`  ok       ${s.id}: replayed ${counts}, identical to the recorded replay`);
    else lines.push(`  ok       ${s.id}: loaded, replayed ${counts}`);
  }
  for (const note of p.notes) lines.push(`  ${note}`);
  if (p.replay.written)
    lines.push(`  replay recorded in ${p.replay.written.file} (${p.replay.written.sessions} session(s))`);
  return lines;
}
