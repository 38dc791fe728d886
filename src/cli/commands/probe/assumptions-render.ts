/** Human lines for `agyctl probe --assumptions`: one per fact, verdict first, then what was seen. */
import type { AssumptionsReport } from '../../../probe/assumptions.js';

const MARK = { held: 'held   ', differs: 'DIFFERS', unknown: 'unknown' } as const;

export function renderAssumptions(r: AssumptionsReport): string[] {
  const lines = r.assumptions.flatMap((a) => [
    `${MARK[a.verdict]}  ${a.id}: ${a.fact}`,
    ...(a.seen === null ? [] : [`           ${a.verdict === 'unknown' ? 'why' : 'seen'}: ${a.seen}`]),
  ]);
  lines.push(
    '',
    `${r.counts.held} held, ${r.counts.differs} differ, ${r.counts.unknown} unknown; server ${r.server}; ${r.loadedSession ? `loaded a copy of ${r.loadedSession}` : 'no session loaded'}; state dir ${r.stateDir.unchanged ? 'as it was' : 'CHANGED'}`,
  );
  if (r.counts.differs > 0)
    lines.push(
      'a fact that differs is worth a bug report: attach `agyctl probe --assumptions --json` (it holds no secret)',
    );
  return lines;
}
