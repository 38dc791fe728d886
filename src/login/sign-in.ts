/**
 * One sign-in attempt on one server process: start it with the capture
 * shims, call authenticate, catch the URL from whichever channel shows it,
 * present it, and wait. The server, the shims and the listener are gone when
 * this returns or throws.
 */

import { AcpError } from '../acp/acp-error.js';
import type { Connection } from '../acp/connection.js';
import { FAILED_STOP } from '../acp/lifecycle.js';
import type { AuthAccount, AuthStatus, InitializeResult } from '../acp/protocol.js';
import {
  AUTH_STATUS_PUSHES,
  authenticate,
  authStatus,
  CANCEL_REQUEST,
  cancelledRequestId,
  cancelSignIn,
  describeInit,
  readAuthStatus,
  supportsAuthStatus,
} from '../acp/protocol.js';
import { serverText } from '../acp/redact.js';
import { AgyError, EXIT } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { tempRoot } from '../core/paths.js';
import { profileOf, type ServerProfile } from '../profiles/index.js';
import { serverStartOptions } from '../profiles/server-start.js';
import { checkSignInMethod } from '../profiles/sign-in-support.js';
import { withDeadline } from '../util/deadline.js';
import { signInRequestHandler } from './capture/elicitation-source.js';
import { type Candidate, describeCandidate, noSignInUrlError } from './capture/evidence.js';
import { type CapturedUrl, UrlCapture } from './capture/pipeline.js';
import { Secrets, scrubbingTracer, waitForCode } from './code-entry.js';
import type { LoginOptions, ShowLoginEvent, SignedInAccount } from './events.js';
import { codeEntryEvent, devicePageEvent, loopbackUrlEvent, openInBrowser, withClientCheck } from './present.js';
import { createShimDir, loginServerEnv, recordOwner, sweepStaleLoginDirs } from './shims.js';
import { type Ready, startForSignIn } from './startup.js';
import { authFailure, type Pastes, waitForServerSignIn, waitForSignIn } from './wait.js';

/** If no URL shows up by then, say what usually causes it. */
const NO_URL_HINT_AFTER_MS = 20_000;
/** The authenticate call may outlive our deadline by this much, so our own timeout message wins. */
const CALL_MARGIN_MS = 30_000;
/** auth/status after a sign-in only names the account: a server slow to answer it is not waited for longer. */
const ACCOUNT_ASK_MS = 5_000;

/** The login's options a sign-in uses, the method it settled on, and where its steps go. */
export interface SignInOptions extends Pick<LoginOptions, 'timeoutMs' | 'fakeDisplay' | 'target' | 'open'> {
  method: string;
  show: ShowLoginEvent;
  /** Pasted redirects or codes, while the sign-in waits for one. */
  pastes: Pastes;
  /** Right after initialize (login adopts a detected profile here). */
  onStarted?: (init: InitializeResult) => void;
}

export interface SignInResult {
  url: CapturedUrl | undefined;
  tunnel: string | undefined;
  /** Whom the server says it signed in: its last auth status push, else its answer to auth/status (if it has one). */
  account: AuthAccount | undefined;
}

export async function signIn(io: CommandIO, options: SignInOptions): Promise<SignInResult> {
  const profile = profileOf(io.opts);
  const browser = isBrowserMethod(profile, options.method);
  for (const dir of sweepStaleLoginDirs(tempRoot(io.ctx.env)))
    void options.show({ event: 'stale-login-dir-removed', dir });
  const shims = createShimDir(io.ctx.env);
  recordOwner(shims.dir);
  const capture = new UrlCapture(
    shims,
    (c, loud) => reportRejected(options.show, c, loud),
    profile.quirks.codeEntryFallback,
  );
  const secrets = new Secrets();
  const watchers = new Set<(line: string) => void>();
  try {
    const env = browser ? loginServerEnv(io.ctx.env, shims, { fakeDisplay: options.fakeDisplay }) : io.ctx.env;
    const start = serverStartOptions(io, {
      env,
      signingIn: true,
      onRawOutputLine: (line, stream, raw) => {
        capture.feedLine(line, stream, raw);
        for (const w of watchers) w(line);
      },
    });
    start.onServerMessage = (msg, info) => capture.feedMessage(msg, info);
    // Shown lines pass the scrubber too (verbose output, trace): the server echoes a pasted code.
    const output = start.onOutputLine;
    start.onOutputLine = (line, stream) => output?.(secrets.scrub(line), stream);
    start.tracer = scrubbingTracer(io.tracer, secrets);
    const { server, started } = await startForSignIn(start, capture, {
      timeoutMs: options.timeoutMs + CALL_MARGIN_MS,
      tokenFile: profile.files(io.opts.stateDir).token,
    });
    const onAbort = (): void => {
      cancelSignIn(server.connection);
      server.kill();
    };
    io.ctx.signal.addEventListener('abort', onAbort, { once: true });
    listenForElicitation(server.connection, capture, options.show);
    const heard = listenForAuthStatus(server.connection, options.show);
    const withdrawals = listenForWithdrawals(server.connection);
    let init: InitializeResult | undefined;
    let failed = true;
    const ok = async (r: Omit<SignInResult, 'account'>): Promise<SignInResult> => {
      const account = await namedAccount(server.connection, init, heard.latest());
      failed = false;
      return { ...r, account };
    };
    try {
      const startedAt = Date.now();
      const deadline = startedAt + options.timeoutMs;
      const callAuthenticate = (ready: Ready): Promise<unknown> => {
        init = ready.init;
        const { initMs } = ready;
        announce({ pid: server.pid, init, initMs }, options);
        return authenticate(server.connection, options.method, {
          timeoutMs: options.timeoutMs + CALL_MARGIN_MS,
          signal: io.ctx.signal,
        });
      };
      let first: CapturedUrl | undefined;
      let auth: Promise<unknown>;
      if (started.kind === 'ready') {
        auth = callAuthenticate(started);
        auth.catch(() => undefined); // observed below; never an unhandled rejection
        if (!browser) {
          await withDeadline(auth, {
            timeoutMs: options.timeoutMs,
            signal: io.ctx.signal,
            what: `waiting for the server to accept ${options.method}`,
          }).catch(mapAuthError(io));
          return await ok({ url: undefined, tunnel: undefined });
        }
        first = await raceForUrl(io, { capture, auth, startedAt, timeoutMs: options.timeoutMs, show: options.show });
        if (!first) return await ok({ url: undefined, tunnel: undefined }); // authenticated without a browser round trip
      } else {
        if (!browser) throw startupSignInRefused(profile, options.method);
        void options.show({ event: 'sign-in-before-initialize' });
        first = started.url;
        auth = started.ready.then(callAuthenticate);
        auth.catch(() => undefined);
      }
      const wait = {
        server,
        auth: first.auth,
        authenticate: auth,
        deadline,
        startedAt,
        show: options.show,
        pastes: options.pastes,
        withdrawn: withdrawals.of(first),
      };
      const origin = { source: first.source, via: first.via, message: first.elicitation?.message };
      if (first.kind === 'device') {
        await options.show(withClientCheck(devicePageEvent(first.auth, options.method, origin), profile.oauthClient));
        if (options.open) await openInBrowser(io, first.auth.url, options.show);
        await waitForServerSignIn(io, wait);
        return await ok({ url: first, tunnel: undefined });
      }
      if (first.kind === 'code-entry') {
        await options.show(withClientCheck(codeEntryEvent(first.auth, options.method), profile.oauthClient));
        if (options.open) await openInBrowser(io, first.auth.url, options.show);
        const watchOutput = (w: (line: string) => void): (() => void) => {
          watchers.add(w);
          return () => watchers.delete(w);
        };
        await waitForCode(io, {
          ...wait,
          open: options.open,
          method: options.method,
          watchOutput,
          addSecret: (v) => secrets.add(v),
        });
        return await ok({ url: first, tunnel: undefined });
      }
      // The path always comes from the server's own redirect_uri; a difference from the profile is drift worth a note.
      if (first.auth.redirectPath !== profile.redirectPath)
        void options.show({
          event: 'redirect-path-differs',
          path: first.auth.redirectPath,
          profile: profile.id,
          expected: profile.redirectPath,
        });
      const shown = withClientCheck(loopbackUrlEvent(first.auth, options, origin), profile.oauthClient);
      await options.show(shown);
      const tunnel = shown.tunnel;
      if (options.open) await openInBrowser(io, first.auth.url, options.show);
      await waitForSignIn(io, { ...wait, listenerGraceMs: profile.quirks.listenerGoneGraceMs });
      return await ok({ url: first, tunnel });
    } finally {
      io.ctx.signal.removeEventListener('abort', onAbort);
      // agyctl gives up on a sign-in still pending (deadline, failure): a v2 server hears so before it is stopped.
      if (failed) cancelSignIn(server.connection);
      // After a failure (the deadline, a refused sign-in) the stop is short, so --timeout holds even when SIGTERM is ignored.
      await server.stop(failed ? FAILED_STOP : {});
    }
  } finally {
    capture.close();
    shims.remove();
  }
}

function announce(server: { pid: number } & Ready, options: SignInOptions): void {
  const { pid, init, initMs } = server;
  void options.show({ event: 'server-started', pid, agent: describeInit(init).agent, ms: initMs });
  checkSignInMethod(init, options.method); // before anything onStarted says about that method
  options.onStarted?.(init);
}

/**
 * A login answers a URL elicitation tied to its authenticate with `accept` (the user asked to sign in). The
 * `authenticate` answer decides the sign-in: `elicitation/complete` only says the browser step ended.
 */
function listenForElicitation(conn: Connection, capture: UrlCapture, show: ShowLoginEvent): void {
  conn.setRequestHandler(signInRequestHandler(conn, capture, 'accept'));
  conn.onNotification((method) => {
    if (method === 'elicitation/complete') void show({ event: 'page-step-ended' });
  });
}

/** The auth status pushes of a sign-in (ACP's and vendors'): each one an event; the last one names the account. */
function listenForAuthStatus(conn: Connection, show: ShowLoginEvent): { latest: () => AuthStatus | undefined } {
  let latest: AuthStatus | undefined;
  conn.onNotification((method, params) => {
    if (!AUTH_STATUS_PUSHES.includes(method)) return;
    latest = readAuthStatus(params);
    const account = latest.account ? { account: serverAccount(latest.account) } : {};
    void show({ event: 'auth-status', state: latest.state, ...account, pushedWith: method });
  });
  return { latest: () => latest };
}

/** The account as login reports it: the server's words (already sanitised and redacted by readAuthStatus). */
export const serverAccount = (a: AuthAccount): SignedInAccount => ({
  label: a.label,
  email: a.email ?? null,
  source: 'server',
});

/** The account a sign-in ended with: a pushed one, else auth/status when advertised (no side effects); never a failure. */
async function namedAccount(
  conn: Connection,
  init: InitializeResult | undefined,
  pushed: AuthStatus | undefined,
): Promise<AuthAccount | undefined> {
  if (pushed?.account || !init || !supportsAuthStatus(init)) return pushed?.account;
  try {
    return (await authStatus(conn, { timeoutMs: ACCOUNT_ASK_MS })).account;
  } catch {
    return undefined;
  }
}

/**
 * `$/cancel_request` from the server naming one of its elicitations: it withdrew that URL. Heard from the start, so
 * a withdrawal that arrives before the wait begins is not lost.
 */
function listenForWithdrawals(conn: Connection): { of: (url: CapturedUrl) => Promise<string> | undefined } {
  const withdrawn = new Set<string | number>();
  const waiting = new Map<string | number, () => void>();
  conn.onNotification((method, params) => {
    const id = method === CANCEL_REQUEST ? cancelledRequestId(params) : undefined;
    if (id === undefined) return;
    withdrawn.add(id);
    waiting.get(id)?.();
  });
  return {
    of(url) {
      const requestId = url.elicitation?.requestId;
      if (requestId === undefined || requestId === null) return undefined;
      const elicitationId = url.elicitation!.id;
      if (withdrawn.has(requestId)) return Promise.resolve(elicitationId);
      return new Promise((resolve) => waiting.set(requestId, () => resolve(elicitationId)));
    },
  };
}

function startupSignInRefused(profile: ServerProfile, method: string): AgyError {
  return new AgyError(
    EXIT.auth,
    'auth-failed',
    `The server started a Google sign-in at start-up (its settings name an OAuth type without usable credentials), so it cannot switch to ${method} in this run.`,
    {
      hint: `set ${profile.authTypePath.join('.')} to ${method} in settings.json (or remove it), then run agyctl login --method ${method} again`,
    },
  );
}

const mapAuthError =
  (io: CommandIO) =>
  (err: unknown): never => {
    throw err instanceof AcpError ? authFailure(err, io.ctx.env) : err;
  };

/** Every candidate that was not used: a warning when it looked like a sign-in, else --verbose only (evidence either way). */
function reportRejected(show: ShowLoginEvent, c: Candidate, loud: boolean): void {
  const event = {
    event: 'url-rejected',
    source: c.channel,
    reason: c.reason,
    loud,
    ...(c.via ? { via: c.via } : {}),
    ...(c.url ? { url: c.url } : {}),
  } as const;
  void show({ ...event, text: serverText(`not a sign-in URL: ${describeCandidate(c)}`, { singleLine: true }) });
}

/** What the race for the URL needs: the capture, the authenticate call, and the sign-in's clock. */
interface UrlRace {
  capture: UrlCapture;
  auth: Promise<unknown>;
  timeoutMs: number;
  startedAt: number;
  show: ShowLoginEvent;
}

/** The URL, or undefined when authenticate finished first; a failure or the deadline throws (listing what was seen). */
async function raceForUrl(io: CommandIO, race: UrlRace): Promise<CapturedUrl | undefined> {
  const { capture, auth, timeoutMs, startedAt } = race;
  const hint = setTimeout(
    () => void race.show({ event: 'no-url-yet', afterS: NO_URL_HINT_AFTER_MS / 1000 }),
    NO_URL_HINT_AFTER_MS,
  );
  try {
    return await withDeadline(Promise.race([capture.found, auth.then(() => undefined, mapAuthError(io))]), {
      timeoutMs,
      signal: io.ctx.signal,
      what: 'waiting for the server to show a sign-in URL',
    });
  } catch (err) {
    if (err instanceof AgyError && err.exit === EXIT.timeout)
      throw noSignInUrlError(Date.now() - startedAt, capture.evidence);
    throw err;
  } finally {
    clearTimeout(hint);
  }
}

export const isBrowserMethod = (profile: ServerProfile, method: string): boolean =>
  profile.browserMethods.includes(method);
