/**
 * The error when no sign-in URL showed up in time: it lists every candidate
 * seen on every channel and why each was rejected, so a user with a new
 * server build sees at once what happened and can file a useful report.
 */
import { AgyError, EXIT } from '../../core/errors.js';
import { formatDuration } from '../../util/duration.js';
import { describeCandidate, type EvidenceLog } from './evidence.js';

export const CHANNELS_WATCHED =
  'launcher shims (xdg-open, gio, kioclient, BROWSER, browsers by name, ...), stdout, stderr, JSON-RPC messages';

export function noSignInUrlError(waitedMs: number, evidence: EvidenceLog): AgyError {
  const list = evidence.candidates;
  const more = evidence.droppedCount > 0 ? `\n  (and ${evidence.droppedCount} more)` : '';
  const seen =
    list.length === 0
      ? `Nothing that looked like a URL appeared on any channel watched (${CHANNELS_WATCHED}).`
      : `Candidates seen, none of them a usable sign-in URL:\n${list.map((c) => `  - ${describeCandidate(c)}`).join('\n')}${more}`;
  return new AgyError(
    EXIT.timeout,
    'timeout',
    `No sign-in URL from the server within ${formatDuration(waitedMs)}. ${seen}`,
    {
      hint: 'run `agyctl probe --sign-in --verbose` and attach its output to a bug report; the server may not support headless sign-in',
      details: { candidates: list.map((c) => ({ ...c })), candidatesDropped: evidence.droppedCount },
    },
  );
}
