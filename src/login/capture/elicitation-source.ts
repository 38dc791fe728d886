/**
 * ACP URL elicitation as a capture channel. An agent that shows its sign-in
 * page the standard way sends `elicitation/create` with `mode: "url"`, a
 * `url`, a `message` and an `elicitationId`, tied by `requestId` to our
 * pending `authenticate`. That URL goes to the capture pipeline, which
 * validates it like every other candidate; the agent gets `accept` from a
 * login (the user asked to sign in) or `cancel` from `probe --sign-in`
 * (which signs nothing in), and `decline` when the URL is not one agyctl
 * would show. The `authenticate` answer still decides the sign-in:
 * `elicitation/complete` only says the out-of-band step ended.
 */

import {
  Answered,
  type Connection,
  defaultRequestHandler,
  type RequestHandler,
  unsupportedElicitationMode,
} from '../../acp/connection.js';
import { isAuthenticateMethod } from '../../acp/protocol.js';
import { serverText } from '../../acp/redact.js';
import type { UrlCapture } from './pipeline.js';

/** What agyctl answers a usable sign-in URL with. */
export type ElicitationAnswer = 'accept' | 'cancel';

/** An agent's message is shown; bounded so a long one cannot bury the URL. */
const MAX_MESSAGE = 300;

/**
 * A URL in the server's words is not a link: `https://x` becomes
 * `https[:]//x`, which terminals do not turn into something to click, so the
 * only URL a person can open is the one agyctl checked and shows on its own.
 */
function unlinked(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*):\/\//gi, '$1[:]//');
}

/** Server text for a person: one line, no control or format characters, secrets redacted, no links, bounded. */
export function shownMessage(message: unknown): string {
  const text = unlinked(serverText(typeof message === 'string' ? message : '', { singleLine: true })).trim();
  return text.length <= MAX_MESSAGE ? text : `${text.slice(0, MAX_MESSAGE - 1)}…`;
}

const ANSWER_WORDS: Record<ElicitationAnswer, string> = {
  accept: 'accepted: the sign-in URL is shown to the user',
  cancel: 'cancelled: probe --sign-in records the URL and signs nothing in',
};

/** The request handler of a sign-in: URL elicitations tied to our authenticate feed `capture`; everything else is answered as outside a sign-in. */
export function signInRequestHandler(
  conn: Pick<Connection, 'pendingMethod'>,
  capture: UrlCapture,
  answer: ElicitationAnswer,
): RequestHandler {
  return (method, params, requestId) => {
    if (method !== 'elicitation/create') return defaultRequestHandler(method, params);
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    if (p.mode !== 'url') throw unsupportedElicitationMode(p.mode);
    if (!isAuthenticateMethod(conn.pendingMethod(p.requestId))) return defaultRequestHandler(method, params);
    if (typeof p.url !== 'string' || typeof p.elicitationId !== 'string')
      throw { code: -32602, message: 'Invalid params: a url elicitation needs url and elicitationId' };
    const id = shownMessage(p.elicitationId);
    const verdict = capture.feedElicitation(p.url, { id, message: shownMessage(p.message), requestId });
    if (!verdict.ok) return new Answered({ action: 'decline' }, `declined: ${verdict.reason}`);
    return new Answered({ action: answer }, `${ANSWER_WORDS[answer]} (elicitation ${id})`);
  };
}
