/**
 * What the capture saw on every channel, kept as evidence: the URL it used,
 * and every candidate it did not use with the reason. Everything here is
 * redacted when recorded (state, code, challenge and token values never
 * appear), so it can go into --verbose output, the timeout error and
 * --json error details as is. When no sign-in URL showed up in time, the
 * error lists every candidate seen on every channel and why each was
 * rejected, so a user with a new server build sees at once what happened
 * and can file a useful report.
 */
import { REDACTED, redactText } from '../../acp/redact.js';
import { AgyError, EXIT } from '../../core/errors.js';
import { formatDuration } from '../../util/duration.js';
import { FILE_KIND_WORDS, type FileKind } from './launcher-source.js';

/**
 * shim: a fake browser or launcher ran; launcher-file: a launcher was handed a local file (an HTML page, a .desktop
 * or .url file) that leads to the URL; stdout/stderr: a line of output; rpc: a JSON-RPC message that was not the
 * answer to our own request (or its _meta/error data); elicitation: an ACP `elicitation/create` request in url mode
 * tied to our authenticate.
 */
export type Channel = 'shim' | 'launcher-file' | 'stdout' | 'stderr' | 'rpc' | 'elicitation';

export interface Candidate {
  channel: Channel;
  /** The launcher program (shim, launcher-file), which message and field (rpc), or the elicitation id (elicitation). */
  via?: string;
  /** The launcher's arguments, redacted (shim, launcher-file). */
  args?: string[];
  /** The file the launcher was handed, when its kind is known (launcher-file only). */
  file?: { kind: FileKind };
  /** The URL, redacted; absent when a launcher got no URL at all. */
  url?: string;
  /** Why it was not used. */
  reason: string;
}

/** A timeout error lists this many; more would bury the cause. */
export const MAX_EVIDENCE = 40;
/** Parameters redact.ts may not know: the PKCE challenge and an OpenID nonce. */
const EXTRA_SECRET_PARAM = /([?&#;](?:code_challenge|nonce)=)[^&#\s"']*/gi;

export function redactEvidence(text: string): string {
  return redactText(text).replace(EXTRA_SECRET_PARAM, `$1${REDACTED}`);
}

/** Keep evidence readable: one line, bounded. */
export function shorten(text: string, max = 1000): string {
  const oneLine = text.replace(/[\r\n\t]+/g, ' ');
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

const launcherWords = (c: Candidate): string =>
  `launcher ${c.via ?? '?'}${c.args ? ` ${c.args.join(' ')}`.trimEnd() : ''}`;

export function describeCandidate(c: Candidate): string {
  const where =
    c.channel === 'shim'
      ? launcherWords(c)
      : c.channel === 'launcher-file'
        ? `${c.file ? FILE_KIND_WORDS[c.file.kind] : 'a file'} from ${launcherWords(c)}`
        : c.channel === 'rpc'
          ? `JSON-RPC ${c.via ?? 'message'}`
          : c.channel === 'elicitation'
            ? `ACP URL elicitation${c.via ? ` ${c.via}` : ''}`
            : c.channel;
  return `${where}: ${c.url ? `${c.url} — ` : ''}${c.reason}`;
}

export class EvidenceLog {
  private readonly items: Candidate[] = [];
  private dropped = 0;

  add(c: Candidate): void {
    if (this.items.length >= MAX_EVIDENCE) this.dropped += 1;
    else this.items.push(c);
  }

  get candidates(): readonly Candidate[] {
    return this.items;
  }

  get droppedCount(): number {
    return this.dropped;
  }
}

export const CHANNELS_WATCHED =
  'launcher shims (xdg-open, gio, kioclient, BROWSER, browsers by name, ...), stdout, stderr, JSON-RPC messages, ACP URL elicitation';

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
