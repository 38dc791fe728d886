/**
 * `agyctl probe --sign-in`: how does this server build offer sign-in,
 * without signing in. Start the server with the capture shims, call
 * authenticate, catch the URL on whichever channel it appears, report it
 * (state and challenge redacted), then stop the server without ever
 * contacting its listener, and leave the state dir as it was. Plain inputs,
 * a plain report: the command renders it.
 */

import { AcpError } from '../acp/acp-error.js';
import type { StartOptions } from '../acp/lifecycle.js';
import { authenticate, cancelSignIn, describeInit } from '../acp/protocol.js';
import { AgyError, EXIT } from '../core/errors.js';
import { signInRequestHandler } from '../login/capture/elicitation-source.js';
import type { Candidate } from '../login/capture/evidence.js';
import { noSignInUrlError } from '../login/capture/evidence.js';
import { type CapturedUrl, UrlCapture } from '../login/capture/pipeline.js';
import { createShimDir, loginServerEnv, type ShimDir } from '../login/shims.js';
import { startForSignIn } from '../login/startup.js';
import {
  restoreSettings,
  restoreState,
  type SettingsOutcome,
  type StateOutcome,
  type StateSnapshot,
  snapshotState,
} from '../login/state-snapshot.js';
import { describeUrl, type UrlAnatomy } from '../login/url-anatomy.js';
import { checkSignInMethod } from '../profiles/sign-in-support.js';
import { withDeadline } from '../util/deadline.js';

export interface SignInProbeInput {
  env: NodeJS.ProcessEnv;
  stateDir: string;
  settingsFile: string;
  tokenFile: string;
  method: string;
  timeoutMs: number;
  fakeDisplay: boolean;
  /** Accept a code-entry URL on stdout (gemini-cli's fallback). */
  codeEntry: boolean;
  signal: AbortSignal;
  /** Server start options for this environment, with unredacted output lines going to `onRawOutputLine` (capture only). */
  startOptions(env: NodeJS.ProcessEnv, onRawOutputLine: NonNullable<StartOptions['onRawOutputLine']>): StartOptions;
  /** A candidate that was not the sign-in URL (for --verbose). */
  onRejected?(c: Candidate): void;
  /** The server's working directory: a private empty one, so servers that register their cwd (gemini-cli) register only that. */
  cwd: string;
  /** Runs once the server is gone, before the state dir is compared: the profile's own clean-up of what a probe cwd leaves. */
  afterStop?(): void;
}

export interface SignInProbeReport {
  server: string;
  pid: number;
  agent: ReturnType<typeof describeInit>['agent'] | null;
  /** The method authenticate was called with; 'startup' when the server signed in before answering initialize. */
  method: string;
  startupSignIn: boolean;
  /** null: authenticate succeeded without any sign-in URL (credentials from the environment). */
  channel: CapturedUrl['source'] | null;
  /** For shim and launcher-file: the launcher and its arguments (redacted); for launcher-file also the kind of file it was handed. */
  launcher: { program: string; args: string[]; file?: CapturedUrl['file'] } | null;
  /** For the rpc channel: which message and field. */
  message: string | null;
  /** For the elicitation channel: its id, the agent's message (sanitised, redacted) and agyctl's answer (always cancel). */
  elicitation: { id: string; message: string; answer: 'cancel' } | null;
  url: UrlAnatomy | null;
  kind: CapturedUrl['kind'] | null;
  /** Candidates seen and not used, redacted. */
  rejected: Candidate[];
  /** The loopback listener (loopback kind only: a code-entry or device page has none). */
  listener: { port: number; contacted: false } | null;
  settings: { file: string } & SettingsOutcome;
  token: { file: string; note: string };
  stateDir: { path: string } & StateOutcome;
  stopped: { code: number | null; signal: string | null };
}

interface ServerOutcome {
  captured: CapturedUrl | undefined;
  server: string;
  pid: number;
  agent: SignInProbeReport['agent'];
  startupSignIn: boolean;
  stopped: SignInProbeReport['stopped'];
}

/** The authenticate call may outlive our deadline by this much, so our own timeout message wins. */
const CALL_MARGIN_MS = 30_000;
const TOKEN_NOTE =
  'where this build keeps the token after a sign-in; builds that use the OS keyring write nothing here (after a login, `agyctl check --live` tells)';

export async function probeSignIn(input: SignInProbeInput): Promise<SignInProbeReport> {
  const snap = snapshotState(input.stateDir, input.settingsFile);
  const shims = createShimDir(input.env);
  const capture = new UrlCapture(shims, (c) => input.onRejected?.(c), input.codeEntry);
  let outcome: ServerOutcome;
  let settings: SettingsOutcome;
  let state: StateOutcome;
  try {
    outcome = await runServer(input, shims, capture);
  } finally {
    capture.close();
    shims.remove();
    // Only once the server is gone (on failure too): it may have rewritten settings.json or created conversations.
    input.afterStop?.();
    ({ settings, state } = putBack(snap));
  }
  const { captured } = outcome;
  return {
    server: outcome.server,
    pid: outcome.pid,
    agent: outcome.agent,
    method: outcome.startupSignIn ? 'startup' : input.method,
    startupSignIn: outcome.startupSignIn,
    channel: captured?.source ?? null,
    launcher: launcherOf(captured),
    message: captured?.source === 'rpc' ? (captured.via ?? null) : null,
    elicitation: captured?.elicitation
      ? { id: captured.elicitation.id, message: captured.elicitation.message, answer: 'cancel' }
      : null,
    url: captured ? describeUrl(captured.auth) : null,
    kind: captured?.kind ?? null,
    rejected: [...capture.evidence.candidates],
    listener: captured?.kind === 'loopback' ? { port: captured.auth.port, contacted: false } : null,
    settings: { file: input.settingsFile, ...settings },
    token: { file: input.tokenFile, note: TOKEN_NOTE },
    stateDir: { path: input.stateDir, ...state },
    stopped: outcome.stopped,
  };
}

function launcherOf(captured: CapturedUrl | undefined): SignInProbeReport['launcher'] {
  if (captured?.source !== 'shim' && captured?.source !== 'launcher-file') return null;
  const launcher = { program: captured.via ?? '?', args: captured.args ?? [] };
  return captured.file ? { ...launcher, file: captured.file } : launcher;
}

function putBack(snap: StateSnapshot): { settings: SettingsOutcome; state: StateOutcome } {
  const settings = restoreSettings(snap);
  return { settings, state: restoreState(snap) };
}

async function runServer(input: SignInProbeInput, shims: ShimDir, capture: UrlCapture): Promise<ServerOutcome> {
  const env = loginServerEnv(input.env, shims, { fakeDisplay: input.fakeDisplay });
  const start = input.startOptions(env, (line, stream, raw) => capture.feedLine(line, stream, raw));
  start.cwd = input.cwd;
  start.onServerMessage = (msg, info) => capture.feedMessage(msg, info);
  const startedAt = Date.now();
  const { server, started } = await startForSignIn(start, capture, {
    timeoutMs: input.timeoutMs + CALL_MARGIN_MS,
    tokenFile: input.tokenFile,
  });
  const onAbort = (): void => {
    cancelSignIn(server.connection);
    server.kill();
  };
  input.signal.addEventListener('abort', onAbort, { once: true });
  // The probe signs nothing in: an elicited sign-in URL is recorded and answered `cancel`.
  server.connection.setRequestHandler(signInRequestHandler(server.connection, capture, 'cancel'));
  let captured: CapturedUrl | undefined;
  let failure: unknown;
  try {
    if (started.kind === 'ready') checkSignInMethod(started.init, input.method);
    captured =
      started.kind === 'signing-in' ? started.url : await callAndCapture(input, server.connection, capture, startedAt);
  } catch (err) {
    failure = err;
  }
  input.signal.removeEventListener('abort', onAbort);
  // The probe always gives up on its sign-in: a v2 server hears so before it is stopped.
  cancelSignIn(server.connection);
  // Stopping the server closes its listener; the listener itself is never contacted (no request, no connect).
  const exit = await server.stop();
  if (failure !== undefined) throw failure;
  return {
    captured,
    server: start.command.display,
    pid: server.pid,
    agent: started.kind === 'ready' ? describeInit(started.init).agent : null,
    startupSignIn: started.kind === 'signing-in',
    stopped: { code: exit.code, signal: exit.signal },
  };
}

async function callAndCapture(
  input: SignInProbeInput,
  conn: Parameters<typeof authenticate>[0],
  capture: UrlCapture,
  startedAt: number,
): Promise<CapturedUrl | undefined> {
  const auth = authenticate(conn, input.method, { timeoutMs: input.timeoutMs + CALL_MARGIN_MS, signal: input.signal });
  auth.catch(() => undefined);
  try {
    return await withDeadline(Promise.race([capture.found, auth.then(() => undefined, authError)]), {
      timeoutMs: Math.max(1, input.timeoutMs - (Date.now() - startedAt)),
      signal: input.signal,
      what: 'waiting for the server to show a sign-in URL',
    });
  } catch (err) {
    if (err instanceof AgyError && err.exit === EXIT.timeout)
      throw noSignInUrlError(Date.now() - startedAt, capture.evidence);
    throw err;
  }
}

function authError(err: unknown): never {
  if (err instanceof AcpError)
    throw new AgyError(EXIT.auth, 'auth-failed', `The server refused authenticate: ${err.message}`, {
      hint: 'pass --method with one of the methods `agyctl probe` lists',
    });
  throw err;
}
