/**
 * The wait for the sign-in: whichever comes first of the authenticate
 * answer, a pasted redirect (delivered once), the deadline, Ctrl-C, the
 * server's exit, or its listener disappearing. Its skeleton (`runWaitLoop`)
 * is shared with gemini-cli's code entry; a failed sign-in is told apart
 * by the server's own words, so each known cause gets its real fix.
 */

import { AcpError } from '../acp/acp-error.js';
import type { AcpServer } from '../acp/server.js';
import { AgyError, EXIT, InterruptedError, TimeoutError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { type AuthUrl, validatePastedRedirect } from '../profiles/auth-url.js';
import { formatDuration } from '../util/duration.js';
import { emit } from './detached/contract.js';
import { startPasteReader } from './paste.js';
import { deliverRedirect, listenerAlive } from './startup.js';

/** Probe period and grace: a vanished listener is reported within 2 s (test/e2e/login-listener-watch.test.ts measures it). */
export const LIVENESS_EVERY_MS = 700;
export const LIVENESS_GRACE_MS = 900;

export interface WaitOptions {
  server: AcpServer;
  auth: AuthUrl;
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  /** How long a closed listener may go unanswered (a profile quirk); default LIVENESS_GRACE_MS. */
  listenerGraceMs?: number | undefined;
}

export function waitForSignIn(io: CommandIO, o: WaitOptions): Promise<void> {
  let delivered = false;
  let graceRunning = false;

  async function checkListener(loop: WaitLoop): Promise<void> {
    if (loop.settled || delivered || graceRunning || (await listenerAlive(o.auth.port))) return;
    // A successful callback closes the listener just before the answer arrives: allow it a moment.
    graceRunning = true;
    loop.keep(
      setTimeout(() => {
        if (!delivered)
          loop.finish(
            new AgyError(
              EXIT.server,
              'listener-gone',
              `The server's login listener on 127.0.0.1:${o.auth.port} is gone, so the browser's redirect cannot arrive.`,
              {
                hint: 'run `agyctl login` again; if it keeps happening, check the server with `agyctl probe --verbose`',
              },
            ),
          );
      }, o.listenerGraceMs ?? LIVENESS_GRACE_MS),
    );
  }

  const refuse = (reason: string): void => {
    emit(io.out, { event: 'redirect-rejected', reason });
    if (!io.out.json) io.out.warn(`not delivered: ${reason}`);
  };

  async function onPaste(line: string): Promise<void> {
    if (delivered) return refuse('a redirect was already delivered for this login; waiting for the server');
    const v = validatePastedRedirect(line, o.auth);
    if (!v.ok) return refuse(v.reason);
    delivered = true;
    try {
      const status = await deliverRedirect(v.value.deliverTo);
      emit(io.out, { event: 'redirect-delivered', status });
      io.out.verbose(`delivered the redirect to the login listener (HTTP ${status})`);
    } catch (err) {
      delivered = false;
      // The listener closes once a redirect arrives: the browser may have got there first, through the tunnel.
      refuse(
        `could not reach the login listener (${(err as Error).message}); if the browser already reached it through the tunnel, the sign-in is arriving`,
      );
    }
  }

  return runWaitLoop(io, {
    authenticate: o.authenticate,
    deadline: o.deadline,
    startedAt: o.startedAt,
    prompt: 'paste the address your browser ended on',
    nothing: 'No sign-in',
    timeoutHint: 'run `agyctl login --timeout 20m` for more time; the URL is single-use, so open the new one',
    onLine: (line) => void onPaste(line),
    setup: (loop) => {
      loop.keep(setInterval(() => void checkListener(loop), LIVENESS_EVERY_MS));
      return undefined;
    },
  });
}

/** A device-code or verification page: the server learns the outcome itself, so only its answer, the deadline or Ctrl-C end the wait. */
export function waitForServerSignIn(
  io: CommandIO,
  o: Pick<WaitOptions, 'authenticate' | 'deadline' | 'startedAt'>,
): Promise<void> {
  return runWaitLoop(io, {
    ...o,
    prompt: '',
    nothing: 'No sign-in',
    timeoutHint: 'run `agyctl login --timeout 20m` for more time, and open the new page it shows',
    onLine: () => undefined,
    paste: false,
  });
}

// --- the skeleton both sign-in waits share (the browser redirect and gemini-cli's code entry) ---
// A prompt on stdin with a live countdown, the authenticate answer, the deadline, Ctrl-C, and periodic
// `waiting` events. Whichever comes first settles the wait; every timer and the prompt are gone afterwards.

const WAITING_EVENT_EVERY_MS = 15_000;

export function authFailure(err: AcpError, env: NodeJS.ProcessEnv = {}): AgyError {
  return new AgyError(EXIT.auth, 'auth-failed', `The server reported that the sign-in failed: ${err.message}`, {
    hint: signInFailureHint(err, env),
  });
}

export interface WaitLoop {
  readonly settled: boolean;
  finish(err?: unknown): void;
  /** A timer (interval or timeout) cleared when the wait settles. */
  keep(timer: NodeJS.Timeout): void;
}

export interface WaitLoopOptions {
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  /** Prompt text after the countdown, e.g. "paste the authorization code". */
  prompt: string;
  /** What the deadline says: "No sign-in" / "No code". */
  nothing: string;
  timeoutHint: string;
  onLine(line: string, loop: WaitLoop): void;
  /** false: nothing can be pasted (a page the server follows itself), so stdin is left alone. */
  paste?: boolean;
  /** Extra set-up (probes, output watchers); the returned function runs when the wait settles. */
  setup?(loop: WaitLoop): (() => void) | undefined;
}

export function runWaitLoop(io: CommandIO, o: WaitLoopOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timers: NodeJS.Timeout[] = [];
    const remaining = (): number => Math.max(0, o.deadline - Date.now());
    let teardown: (() => void) | undefined;
    const onAbort = (): void => loop.finish(new InterruptedError());
    const loop = {
      settled: false,
      keep: (t: NodeJS.Timeout) => void timers.push(t),
      finish(err?: unknown): void {
        if (loop.settled) return;
        loop.settled = true;
        for (const t of timers) clearInterval(t);
        io.ctx.signal.removeEventListener('abort', onAbort);
        teardown?.();
        reader.close();
        if (err) reject(err);
        else resolve();
      },
    };
    const reader =
      o.paste === false
        ? { close: () => undefined }
        : startPasteReader(io, { text: () => o.prompt, deadline: () => o.deadline }, (line) => {
            if (!loop.settled && line.trim() !== '') o.onLine(line, loop);
          });
    io.ctx.signal.addEventListener('abort', onAbort, { once: true });
    o.authenticate.then(
      () => loop.finish(),
      (err: unknown) => loop.finish(err instanceof AcpError ? authFailure(err, io.ctx.env) : err),
    );
    loop.keep(
      setTimeout(
        () =>
          loop.finish(
            new TimeoutError(`${o.nothing} within ${formatDuration(o.deadline - o.startedAt)}.`, o.timeoutHint),
          ),
        remaining(),
      ),
    );
    const waitingEvent = (): void =>
      emit(io.out, {
        event: 'waiting',
        elapsedS: Math.round((Date.now() - o.startedAt) / 1000),
        remainingS: Math.round(remaining() / 1000),
      });
    waitingEvent();
    loop.keep(setInterval(waitingEvent, WAITING_EVENT_EVERY_MS));
    teardown = o.setup?.(loop);
    if (io.ctx.signal.aborted) onAbort();
  });
}

// --- what a failed sign-in means, from the server's own words ---
// Each known cause gets its real fix; "run login again for a fresh URL" is only for a sign-in that really failed
// in the browser.

export const FRESH_URL_HINT =
  'run `agyctl login` again for a fresh URL (the server remembers a failed attempt, so agyctl starts a new one); sign in with the newest URL only';

export function signInFailureHint(err: AcpError, env: NodeJS.ProcessEnv): string {
  const text = `${err.serverText} ${JSON.stringify(err.data ?? '')}`;
  if (/GEMINI_API_KEY/.test(text)) {
    return "export GEMINI_API_KEY=<your key> where agyctl (and the server) run, or in the server's systemd unit: the server reads its environment only at start, so restart it afterwards; then run `agyctl login --method gemini-api-key`";
  }
  if (/oauth-business/.test(text) && /gcp\.project|gcp\.location/.test(text)) {
    return 'run `agyctl settings set-auth oauth-business --project <gcp-project> --location <region>` (e.g. --location us-central1), then `agyctl login` again';
  }
  if (/agent-platform/.test(text) && /GOOGLE_API_KEY|gcp\.project/.test(text)) {
    return 'export GOOGLE_API_KEY, or run `agyctl settings set-auth agent-platform --project <gcp-project> --location <region>` with Application Default Credentials; then `agyctl login --method agent-platform`';
  }
  if (/EADDRINUSE|address already in use|could not start the callback listener/i.test(text)) {
    const port = /^\d+$/.test(env.OAUTH_CALLBACK_PORT ?? '') ? env.OAUTH_CALLBACK_PORT : /port (\d+)/i.exec(text)?.[1];
    const which = port ? `port ${port}` : 'its fixed callback port';
    return `another program on this box holds the server's ${which}: stop it (\`ss -ltnp${port ? ` 'sport = :${port}'` : ''}\` shows which; often an earlier login still running), or unset OAUTH_CALLBACK_PORT so the server picks a free port; then \`agyctl login\` again`;
  }
  return FRESH_URL_HINT;
}
