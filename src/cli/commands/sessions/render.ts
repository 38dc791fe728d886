/** Human lines for `agyctl sessions` (the --json shape is documented in docs/json.md). */
import type { SessionsReport } from '../../../backup/discover.js';
import { sanitizeForTerminal } from '../../../util/terminal-text.js';
import { formatBytes } from '../backup/progress.js';

export function renderSessions(report: SessionsReport): string[] {
  if (report.sessions.length === 0) return [`no conversations yet in ${report.stateDir}`];
  const lines = [row(['ID', 'SIZE', 'MODIFIED', 'OPEN BY', 'CWD'])];
  for (const s of report.sessions) {
    const modified = s.modified ? s.modified.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-';
    // cwd comes from .meta and an id from a file name, which the server or an archive wrote: no escape sequence reaches the terminal.
    const cwd = s.cwd === null ? '?' : clean(s.cwd);
    lines.push(row([clean(s.id), formatBytes(s.bytes), modified, s.openBy.length > 0 ? s.openBy.join(',') : '-', cwd]));
    if (s.problem) lines.push(`    problem: ${clean(s.problem)}`);
  }
  return lines;
}

const clean = (text: string): string => sanitizeForTerminal(text, { singleLine: true });

/** One table row: id, size, modified, open by, cwd. */
function row([id, size, modified, openBy, cwd]: [string, string, string, string, string]): string {
  return `${id.padEnd(36)}  ${size.padStart(8)}  ${modified.padEnd(20)}  ${openBy.padEnd(8)}  ${cwd}`;
}
