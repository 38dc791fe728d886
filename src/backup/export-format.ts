/**
 * How `sessions export` writes one session: Markdown for people, JSONL for
 * tools. The text is the server's (replayed history): control characters
 * and escape sequences are stripped and token shapes redacted (serverText),
 * as for every byte of server-derived text agyctl stores or prints.
 *
 * JSONL: a first line `{"type":"session",…}` with the session's id, cwd and
 * times, then one line per message `{"type":"message","session","index",
 * "role","text"}` (index from 0, in replay order).
 */
import { serverText } from '../acp/redact.js';
import type { ReplayedMessage } from './replay-record.js';

export type ExportFormat = 'md' | 'jsonl';

export interface ExportedSessionInfo {
  id: string;
  cwd: string | null;
  /** Last change of the session's files when they were copied (db or WAL mtime), when known. */
  modified: string | null;
  /** When the copy the export replayed was taken (the snapshot's creation time). */
  copied: string;
}

export interface SessionWriter {
  header(info: ExportedSessionInfo): string;
  message(sessionId: string, index: number, m: ReplayedMessage): string;
}

const ROLE_TITLE = { user: 'User', agent: 'Agent' } as const;

const markdown: SessionWriter = {
  header(info) {
    const lines = [`# Session ${info.id}`, ''];
    if (info.cwd !== null) lines.push(`- cwd: \`${serverText(info.cwd, { singleLine: true })}\``);
    if (info.modified !== null) lines.push(`- last changed: ${info.modified}`);
    lines.push(`- copied: ${info.copied}`, '');
    return `${lines.join('\n')}\n`;
  },
  message(_sessionId, index, m) {
    return `## ${ROLE_TITLE[m.role]} (${index + 1})\n\n${serverText(m.text)}\n\n`;
  },
};

const jsonl: SessionWriter = {
  header(info) {
    const cwd = info.cwd === null ? null : serverText(info.cwd, { singleLine: true });
    return `${JSON.stringify({ type: 'session', id: info.id, cwd, modified: info.modified, copied: info.copied })}\n`;
  },
  message(sessionId, index, m) {
    return `${JSON.stringify({ type: 'message', session: sessionId, index, role: m.role, text: serverText(m.text) })}\n`;
  },
};

export const WRITERS: Record<ExportFormat, SessionWriter> = { md: markdown, jsonl };
