/** Human lines for `restore` and `restore --dry-run` (the --json shapes are documented in docs/json.md). */

import type { RestoreReport } from '../../../backup/restore.js';
import type { RestorePlan } from '../../../backup/restore-plan.js';
import { formatBytes } from '../backup/progress.js';

/** The dry run's headline: a conversation that holds the snapshot's content already is counted as the same, not replaced. */
function planHeadline(p: RestorePlan): string {
  const head = `dry run: nothing was changed; restoring ${p.snapshot} into ${p.stateDir}`;
  if (p.sessions.length === 0) return `${head} would change nothing`;
  const count = (pred: (s: RestorePlan['sessions'][number]) => boolean): number => p.sessions.filter(pred).length;
  const same = count((s) => s.action === 'replace' && s.sameContent === true);
  const replace = count((s) => s.action === 'replace' && s.sameContent !== true);
  const add = count((s) => s.action === 'add');
  const sameNote = same > 0 ? `; ${same} hold${same === 1 ? 's' : ''} the same content already` : '';
  if (replace === 0 && add === 0) return `${head} would change no conversation${sameNote}:`;
  return `${head} would replace ${replace} and add ${add} conversation(s)${sameNote}:`;
}

export function renderPlan(p: RestorePlan): string[] {
  const lines = [planHeadline(p)];
  for (const s of p.sessions) {
    // Sizes alone mislead: the one there counts its WAL, the snapshot is compacted; say when the content is the same.
    const sizes =
      s.action !== 'replace'
        ? formatBytes(s.snapshotBytes)
        : s.sameContent
          ? `same content as the snapshot (${formatBytes(s.currentBytes)} with its WAL, ${formatBytes(s.snapshotBytes)} compacted)`
          : `${formatBytes(s.currentBytes)} now (db + WAL) -> ${formatBytes(s.snapshotBytes)} (compacted)`;
    const verb = s.action === 'add' ? 'add    ' : s.sameContent ? 'same   ' : 'replace';
    lines.push(`  ${verb} ${s.id}  ${sizes}${s.openBy.length > 0 ? `  OPEN BY pid ${s.openBy.join(', ')}` : ''}`);
    if (s.brainFiles > 0)
      lines.push(
        `          brain/: ${s.brainFiles} file(s)${s.sameBrain ? '; the same files are there already' : s.currentBrainFiles > 0 ? `; the current ${s.currentBrainFiles} kept beside it as a pre-restore copy` : ''}`,
      );
  }
  for (const k of p.kept) lines.push(`  keep    ${k.id}  ${formatBytes(k.bytes)}`);
  if (p.servers.length > 0)
    lines.push(`  a server runs on this state dir (pid ${p.servers.join(', ')}): stop it before restoring`);
  if (p.wouldRefuse)
    lines.push('  a real restore would refuse (exit 6): a process holds a target open; stop the server first');
  for (const d of p.damaged) lines.push(`  DAMAGED ${d}`);
  if (p.damaged.length > 0) lines.push('  a real restore would stop (exit 6): the snapshot is damaged');
  return lines;
}

export function renderRestore(r: RestoreReport): string[] {
  const lines: string[] = [];
  for (const s of r.sessions) {
    if (s.restored)
      lines.push(
        `restored ${s.id}${s.preRestore ? ` (previous database kept as ${s.preRestore})` : s.unchanged ? ' (it held the same content already: no pre-restore copy)' : ''}`,
      );
    else lines.push(`NOT restored ${s.id}: ${s.reason}`);
    if (s.brainPreRestore) lines.push(`  brain/: ${s.brainFiles} file(s); the previous kept as ${s.brainPreRestore}`);
    else if (s.brainFiles > 0) lines.push(`  brain/: ${s.brainFiles} file(s)`);
    else if (s.brainUnchanged) lines.push("  brain/: the snapshot's files are there already, left as they are");
  }
  if (r.sessions.length === 0) lines.push(`nothing to restore in ${r.snapshot}`);
  return lines;
}
