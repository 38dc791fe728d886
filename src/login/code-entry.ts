/**
 * gemini-cli's code-entry sign-in, used when it decides not to open a
 * browser: it prints a Google URL on stdout (the JSON-RPC channel, inside
 * terminal escapes) and reads the code Google then shows the user from its
 * stdin. agyctl shows the URL, asks for the code, and writes it raw to the
 * server's stdin with nothing else in between (any JSON-RPC sent meanwhile
 * would be read as the code). A code the server cannot use makes it start
 * over with a new URL, which is shown again; its second failure ends the
 * authenticate call.
 *
 * The code is a secret agyctl itself handles: gemini-cli's line reader
 * echoes what it reads back onto stdout, and that echo must reach no
 * terminal or trace, so it is redacted by exact value (`Secrets`);
 * pattern-based redaction (src/acp/redact.ts) still applies on top.
 */
import { REDACTED } from '../acp/redact.js';
import type { AcpServer } from '../acp/server.js';
import type { CommandIO, Tracer } from '../core/io.js';
import { type AuthUrl, findUrls, type Validation, validateCodeEntryUrl } from '../profiles/auth-url.js';
import type { ShowLoginEvent } from './events.js';
import { codeEntryEvent, openInBrowser } from './present.js';
import { type Pastes, runWaitLoop, type WaitLoop } from './wait.js';

export interface CodeEntryOptions {
  server: AcpServer;
  auth: AuthUrl;
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  open: boolean;
  /** The auth method, on the `url` event of a retry. */
  method: string | undefined;
  show: ShowLoginEvent;
  pastes: Pastes;
  /** Subscribe to the server's output lines (a retry shows a new URL there); returns the unsubscribe. */
  watchOutput(listener: (line: string) => void): () => void;
  /** Register the code before it is written, so it is scrubbed from every later output line and trace (the server echoes it). */
  addSecret(secret: string): void;
}

/** A pasted code, or the whole address the code page ended on; never shown back. */
export function parseCode(input: string, expectedState: string | undefined): Validation<string> {
  const text = input.trim().replace(/^['"<]+|['">]+$/g, '');
  if (text === '') return { ok: false, reason: 'empty line' };
  if (/^https?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return { ok: false, reason: 'that is not a URL' };
    }
    if (url.searchParams.has('error'))
      return {
        ok: false,
        reason: `the page reports an error (${url.searchParams.get('error')}); sign in again with the same URL`,
      };
    const code = url.searchParams.get('code');
    if (!code) return { ok: false, reason: 'no code in that address; paste the code the page shows' };
    const state = url.searchParams.get('state');
    if (expectedState !== undefined && state !== null && state !== expectedState)
      return { ok: false, reason: 'state does not match this sign-in (is it from an older attempt?)' };
    // Decoded from the URL, it could hold a newline and a second line for the server's stdin: same check as a bare code.
    return checkCode(code);
  }
  return checkCode(text);
}

/** One line of printable ASCII: the server reads exactly one line from stdin as the code. */
function checkCode(code: string): Validation<string> {
  if (/\s/.test(code)) return { ok: false, reason: 'a code has no spaces or line breaks; paste just the code' };
  if (!/^[\x21-\x7e]{4,2048}$/.test(code))
    return { ok: false, reason: 'that does not look like an authorization code' };
  return { ok: true, value: code };
}

export function waitForCode(io: CommandIO, entry: CodeEntryOptions): Promise<void> {
  let sent = false;
  let current = entry.auth;

  function refuse(reason: string): void {
    void entry.show({ event: 'code-rejected', reason });
  }

  function onLine(line: string): void {
    if (sent) {
      refuse('a code was already sent; waiting for the server');
      return;
    }
    const v = parseCode(line, current.state);
    if (!v.ok) {
      refuse(v.reason);
      return;
    }
    entry.addSecret(v.value);
    sent = true;
    // Raw, newline-terminated, and nothing else: the server's line reader takes the next line as the code.
    entry.server.connection.writeRaw(`${v.value}\n`);
    void entry.show({ event: 'code-sent' });
  }

  /** After a code it could not use, the server starts over with a new URL. */
  function onOutput(loop: WaitLoop, line: string): void {
    if (loop.settled) return;
    const next = findUrls(line)
      .map(validateCodeEntryUrl)
      .find((v) => v.ok);
    if (!next?.ok || next.value.url === current.url) return;
    current = next.value;
    sent = false;
    const url = current.url;
    void Promise.resolve(entry.show(codeEntryEvent(current, entry.method, true))).then(() =>
      entry.open ? openInBrowser(io, url, entry.show) : undefined,
    );
  }

  return runWaitLoop(io, {
    authenticate: entry.authenticate,
    deadline: entry.deadline,
    startedAt: entry.startedAt,
    show: entry.show,
    pastes: entry.pastes,
    nothing: 'No code',
    timeoutHint: 'run `agyctl login` again; the URL is single-use, so open the new one',
    onLine,
    setup: (loop) => entry.watchOutput((line) => onOutput(loop, line)),
  });
}

export class Secrets {
  private readonly values = new Set<string>();

  add(value: string): void {
    if (value.length >= 4) this.values.add(value);
  }

  scrub(text: string): string {
    let out = text;
    for (const v of this.values) out = out.split(v).join(REDACTED);
    return out;
  }
}

export function scrubbingTracer(inner: Tracer, secrets: Secrets): Tracer {
  return {
    record: (direction, payload) =>
      inner.record(direction, typeof payload === 'string' ? secrets.scrub(payload) : payload),
    close: () => inner.close(),
  };
}
