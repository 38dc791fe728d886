/**
 * The wait for the sign-in: whichever comes first of the authenticate
 * answer, a pasted redirect (delivered once), the deadline, Ctrl-C, the
 * server's exit, or its listener disappearing. Its skeleton (`runWaitLoop`)
 * is shared with gemini-cli's code entry; a failed sign-in is told apart
 * by the server's own words, so each known cause gets its real fix.
 */

import { isPersonalAccountRefusal, personalAccountRefused } from '../acp/account-refusal.js';
import { AcpError } from '../acp/acp-error.js';
import type { AcpServer } from '../acp/server.js';
import { AgyError, EXIT, InterruptedError, TimeoutError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { type AuthUrl, validatePastedRedirect } from '../profiles/auth-url.js';
import { formatDuration } from '../util/duration.js';
import type { ShowLoginEvent } from './events.js';
import { deliverRedirect, listenerAlive } from './startup.js';

/** Probe period and grace: a vanished listener is reported within 2 s (test/e2e/login/login-listener-watch.test.ts measures it). */
export const LIVENESS_EVERY_MS = 700;
export const LIVENESS_GRACE_MS = 900;

/** One sign-in's wait: its server, its URL, its authenticate call and deadline, and where its steps go. */
export interface SignInWait {
  server: AcpServer;
  auth: AuthUrl;
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  /** How long a closed listener may go unanswered (a profile quirk); default LIVENESS_GRACE_MS. */
  listenerGraceMs?: number | undefined;
  show: ShowLoginEvent;
  pastes: Pastes;
  /** Resolves with the elicitation's id when the server withdraws the URL it asked the user to open. */
  withdrawn?: Promise<string> | undefined;
}

export function waitForSignIn(io: CommandIO, wait: SignInWait): Promise<void> {
  const { auth, show } = wait;
  let delivered = false;
  let graceRunning = false;

  async function checkListener(loop: WaitLoop): Promise<void> {
    if (loop.settled || delivered || graceRunning || (await listenerAlive(auth.port))) return;
    // A successful callback closes the listener just before the answer arrives: allow it a moment.
    graceRunning = true;
    loop.keep(
      setTimeout(() => {
        if (!delivered)
          loop.finish(
            new AgyError(
              EXIT.server,
              'listener-gone',
              `The server's login listener on 127.0.0.1:${auth.port} is gone, so the browser's redirect cannot arrive.`,
              {
                hint: 'run `agyctl login` again; if it keeps happening, check the server with `agyctl probe --verbose`',
              },
            ),
          );
      }, wait.listenerGraceMs ?? LIVENESS_GRACE_MS),
    );
  }

  const refuse = (reason: string): void => void show({ event: 'redirect-rejected', reason });

  async function onPaste(line: string): Promise<void> {
    if (delivered) return refuse('a redirect was already delivered for this login; waiting for the server');
    const v = validatePastedRedirect(line, auth);
    if (!v.ok) return refuse(v.reason);
    delivered = true;
    try {
      const status = await deliverRedirect(v.value.deliverTo);
      void show({ event: 'redirect-delivered', status });
    } catch (err) {
      delivered = false;
      // The listener closes once a redirect arrives: the browser may have got there first, through the tunnel.
      refuse(
        `could not reach the login listener (${(err as Error).message}); if the browser already reached it through the tunnel, the sign-in is arriving`,
      );
    }
  }

  return runWaitLoop(io, {
    authenticate: wait.authenticate,
    deadline: wait.deadline,
    startedAt: wait.startedAt,
    show,
    nothing: 'No sign-in',
    timeoutHint: 'run `agyctl login --timeout 20m` for more time; the URL is single-use, so open the new one',
    withdrawn: wait.withdrawn,
    pastes: wait.pastes,
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
  wait: Pick<SignInWait, 'authenticate' | 'deadline' | 'startedAt' | 'show' | 'withdrawn'>,
): Promise<void> {
  return runWaitLoop(io, {
    ...wait,
    nothing: 'No sign-in',
    timeoutHint: 'run `agyctl login --timeout 20m` for more time, and open the new page it shows',
    onLine: () => undefined,
  });
}

// --- the skeleton both sign-in waits share (the browser redirect and gemini-cli's code entry) ---
// Pasted lines, the authenticate answer, the deadline, Ctrl-C, and periodic
// `waiting` events. Whichever comes first settles the wait; every timer and the prompt are gone afterwards.

const WAITING_EVENT_EVERY_MS = 15_000;
/** After the server withdraws the URL, how long its answer to the sign-in may take before agyctl stops waiting. */
export const WITHDRAWN_GRACE_MS = 30_000;

/** The sign-in failed after the server had withdrawn its URL: its own words, and that it withdrew the URL first. */
function withdrawnFailure(err: AcpError, env: NodeJS.ProcessEnv): AgyError {
  const failure = authFailure(err, env);
  if (failure.code !== 'auth-failed') return failure;
  return new AgyError(
    EXIT.auth,
    'auth-failed',
    `The server withdrew the sign-in URL, then reported that the sign-in failed: ${err.message}`,
    { hint: FRESH_URL_HINT },
  );
}

/** The server withdrew the URL and then did not answer the sign-in: agyctl stops rather than wait out --timeout. */
function withdrawnUnanswered(elicitationId: string, graceMs: number): AgyError {
  return new AgyError(
    EXIT.auth,
    'sign-in-withdrawn',
    `The server withdrew the sign-in URL (elicitation ${elicitationId}) and did not end the sign-in within ${formatDuration(graceMs)}; nothing was signed in.`,
    { hint: FRESH_URL_HINT },
  );
}

export function authFailure(err: AcpError, env: NodeJS.ProcessEnv = {}): AgyError {
  if (isPersonalAccountRefusal(err.serverText)) return personalAccountRefused();
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

/** Where pasted lines come from (the supervisor's `deliver`, fed by `login finish` and the attached prompt). */
export interface Pastes {
  /** Calls onLine with each pasted line until the returned function is called. */
  listen(onLine: (line: string) => void): () => void;
}

export interface WaitLoopOptions {
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  show: ShowLoginEvent;
  /** What the deadline says: "No sign-in" / "No code". */
  nothing: string;
  timeoutHint: string;
  onLine(line: string, loop: WaitLoop): void;
  /** Absent: nothing can be pasted (a page the server follows itself). */
  pastes?: Pastes | undefined;
  /** The server withdrew the URL (`$/cancel_request` of its elicitation): resolves with the elicitation's id. */
  withdrawn?: Promise<string> | undefined;
  /** Extra set-up (probes, output watchers); the returned function runs when the wait settles. */
  setup?(loop: WaitLoop): (() => void) | undefined;
}

export function runWaitLoop(io: CommandIO, wait: WaitLoopOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timers: NodeJS.Timeout[] = [];
    const remaining = (): number => Math.max(0, wait.deadline - Date.now());
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
        stopListening();
        if (err) reject(err);
        else resolve();
      },
    };
    const stopListening =
      wait.pastes?.listen((line) => {
        if (!loop.settled && line.trim() !== '') wait.onLine(line, loop);
      }) ?? (() => undefined);
    io.ctx.signal.addEventListener('abort', onAbort, { once: true });
    let withdrawn = false;
    wait.authenticate.then(
      () => loop.finish(),
      (err: unknown) =>
        loop.finish(err instanceof AcpError ? (withdrawn ? withdrawnFailure : authFailure)(err, io.ctx.env) : err),
    );
    loop.keep(
      setTimeout(
        () =>
          loop.finish(
            new TimeoutError(
              `${wait.nothing} within ${formatDuration(wait.deadline - wait.startedAt)}.`,
              wait.timeoutHint,
            ),
          ),
        remaining(),
      ),
    );
    void wait.withdrawn?.then((elicitationId) => {
      if (loop.settled) return;
      withdrawn = true;
      // Nothing to open or paste any more: only the server's answer (or the shorter deadline) ends the wait.
      for (const t of timers.splice(0)) clearInterval(t);
      stopListening();
      teardown?.();
      teardown = undefined;
      const graceMs = Math.min(remaining(), WITHDRAWN_GRACE_MS);
      void wait.show({ event: 'url-withdrawn', elicitationId, graceS: Math.round(graceMs / 1000) });
      loop.keep(setTimeout(() => loop.finish(withdrawnUnanswered(elicitationId, graceMs)), graceMs));
    });
    const waitingEvent = (): void =>
      void wait.show({
        event: 'waiting',
        elapsedS: Math.round((Date.now() - wait.startedAt) / 1000),
        remainingS: Math.round(remaining() / 1000),
      });
    waitingEvent();
    loop.keep(setInterval(waitingEvent, WAITING_EVENT_EVERY_MS));
    teardown = wait.setup?.(loop);
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
