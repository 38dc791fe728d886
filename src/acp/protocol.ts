/**
 * The ACP calls agyctl makes, with the shapes measured on RC01 (see
 * ../shared/reference/acp-protocol-reference.md). Types come from the SDK
 * where they fit; results are read defensively because servers drift.
 *
 * Two uses of them live here too: what a server says about itself in
 * initialize, redacted and in one shape (probe, check --live, login); and
 * the throwaway session that proves credentials work the way the next start
 * will see them (session/new in an empty temporary directory, then
 * session/close; the caller removes its conversation files with
 * removeConversation() once the server has stopped, since a live server may
 * still hold the database open).
 */

import fs from 'node:fs';
import path from 'node:path';
import type { InitializeResponse, NewSessionResponse } from '@agentclientprotocol/sdk';
import { AgyError, EXIT } from '../core/errors.js';
import { conversationFiles, tempRoot } from '../core/paths.js';
import { childPath, isUuid, showUntrusted } from '../core/safe-path.js';
import { AcpError } from './acp-error.js';
import type { CallOptions, Connection } from './connection.js';
import { redactText, serverText, serverValue } from './redact.js';

/** The version agyctl asks for; a server may answer another one it speaks (ACP's negotiation). */
export const PROTOCOL_VERSION = 1;
/**
 * The versions agyctl speaks. v2 renames the few methods agyctl uses (`authenticate` → `auth/login`, `logout` →
 * `auth/logout`, `session/load` → `session/resume` with a replay from the start) and fields (`agentCapabilities` →
 * `capabilities`, `agentInfo` → `info`, an auth method's `id` → `methodId`); initialize's answer is read in either
 * spelling and handed on in v1's, so only the method names below depend on the version.
 */
export const SPOKEN_VERSIONS: readonly number[] = [1, 2];
const negotiated = new WeakMap<Connection, number>();

/** The version this connection's server answered initialize with (1 until it has). */
export const protocolVersionOf = (c: Connection): number => negotiated.get(c) ?? 1;

/** Method names by version, for the calls whose names v2 changed. */
const METHOD_NAMES = {
  authenticate: { 1: 'authenticate', 2: 'auth/login' },
  logout: { 1: 'logout', 2: 'auth/logout' },
  loadSession: { 1: 'session/load', 2: 'session/resume' },
} as const;

/**
 * A call whose name v2 changed: v2's name on a v2 connection, v1's otherwise. A v2 server that answers -32601 to
 * v2's name (a build that answered 2 but kept v1's methods) is asked once more by v1's name, with v1's params.
 */
function versioned<T>(
  c: Connection,
  call: keyof typeof METHOD_NAMES,
  params: { v1: unknown; v2: unknown },
  options: CallOptions,
): Promise<T> {
  if (protocolVersionOf(c) !== 2) return c.request<T>(METHOD_NAMES[call][1], params.v1, options);
  return c.request<T>(METHOD_NAMES[call][2], params.v2, options).catch((err: unknown) => {
    if (!(err instanceof AcpError) || err.code !== -32601 || err.method !== METHOD_NAMES[call][2]) throw err;
    return c.request<T>(METHOD_NAMES[call][1], params.v1, options);
  });
}

/** Whether a pending request's method is the sign-in, in either version's name. */
export const isAuthenticateMethod = (method: string | undefined): boolean =>
  method === METHOD_NAMES.authenticate[1] || method === METHOD_NAMES.authenticate[2];

/**
 * fs and terminal off: verified harmless on RC01, and agyctl never edits files for the agent. URL elicitation on:
 * an agent that shows its sign-in page that way asks for it (ACP's elicitation), and cancels the sign-in otherwise.
 */
export function initializeParams(version: string): Record<string, unknown> {
  return {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
      elicitation: { url: {} },
    },
    clientInfo: { name: 'agyctl', title: 'agyctl', version },
  };
}

/** An auth method's kind: `agent` (the server signs in through authenticate), `terminal`, `env_var`, or another. */
export type AuthMethodType = string;

export type InitializeResult = Partial<InitializeResponse> & {
  agentInfo?: { name?: string; title?: string; version?: string };
  authMethods?: Array<{ id: string; type?: AuthMethodType; name?: string; description?: string | null }>;
  agentCapabilities?: Record<string, unknown> & { auth?: { logout?: unknown; status?: unknown } };
};

/** Methods whose type says the client does the sign-in itself: never sent to authenticate / auth/login. */
export const CLIENT_SIDE_METHOD_TYPES: readonly string[] = ['terminal', 'env_var'];

/** One auth method as advertised, `id` read from `id` or `methodId`, `type` absent meaning `agent`. */
function normalizeMethod(m: unknown): { id: string; type: string; name?: string; description?: string | null } | [] {
  if (!m || typeof m !== 'object') return [];
  const raw = m as Record<string, unknown>;
  const id = typeof raw.id === 'string' ? raw.id : typeof raw.methodId === 'string' ? raw.methodId : undefined;
  if (id === undefined) return [];
  return { ...(raw as object), id, type: methodType(raw) };
}

/** A method's type as advertised (normalizeInit fills it in); `agent` when absent. */
export function methodType(m: unknown): string {
  const t = (m as { type?: unknown } | undefined)?.type;
  return typeof t === 'string' && t !== '' ? t : 'agent';
}

/** Answers that came in v2's spelling (`capabilities`): there `auth/logout` is advertised by the methods list. */
const v2Spelled = new WeakSet<object>();

/** initialize's answer in v1's spelling, whichever version the server speaks (fields of the other kept as they are). */
export function normalizeInit(raw: Record<string, unknown>): InitializeResult {
  const out: Record<string, unknown> = { ...raw };
  if (raw.agentCapabilities === undefined && raw.capabilities !== undefined) v2Spelled.add(out);
  if (out.agentCapabilities === undefined && raw.capabilities && typeof raw.capabilities === 'object')
    out.agentCapabilities = raw.capabilities;
  if (out.agentInfo === undefined && raw.info && typeof raw.info === 'object') out.agentInfo = raw.info;
  if (Array.isArray(raw.authMethods)) out.authMethods = raw.authMethods.flatMap(normalizeMethod);
  return out as InitializeResult;
}

/** The version the server answered: absent or not a number reads as 1 (RC01 answers 1); one agyctl does not speak is exit 4. */
function negotiate(c: Connection, raw: Record<string, unknown>): void {
  const v = raw.protocolVersion;
  const version = typeof v === 'number' ? v : 1;
  if (!SPOKEN_VERSIONS.includes(version))
    throw new AgyError(
      EXIT.server,
      'protocol-version-unsupported',
      `The server answered initialize with ACP protocol version ${version}, which agyctl does not speak (it speaks ${SPOKEN_VERSIONS.join(' and ')}).`,
      {
        hint: 'use a server build that speaks ACP version 1 or 2, or an agyctl that knows this version',
        details: { protocolVersion: version },
      },
    );
  negotiated.set(c, version);
}

export type NewSessionResult = Partial<NewSessionResponse> & {
  sessionId: string;
  models?: { currentModelId?: string; availableModels?: Array<{ modelId: string }> };
};

/** initialize's params without the elicitation capability, for a server that refuses it. */
function withoutElicitation(params: Record<string, unknown>): Record<string, unknown> {
  const { elicitation: _dropped, ...caps } = params.clientCapabilities as Record<string, unknown>;
  return { ...params, clientCapabilities: caps };
}

/**
 * A JSON-RPC error to initialize means the server cannot serve at all: a server failure (exit 4), not a bug of ours.
 * Invalid params (-32602) are asked once more without the elicitation capability, which a server may not know.
 */
export const initialize = (c: Connection, version: string, call: CallOptions): Promise<InitializeResult> =>
  c
    .request<Record<string, unknown>>('initialize', initializeParams(version), call)
    .catch((err: unknown) => {
      if (!(err instanceof AcpError) || err.method !== 'initialize' || err.code !== -32602) throw err;
      return c.request<Record<string, unknown>>('initialize', withoutElicitation(initializeParams(version)), call);
    })
    .then((raw) => {
      if (!raw || typeof raw !== 'object') return raw as InitializeResult;
      negotiate(c, raw);
      return normalizeInit(raw);
    })
    .catch((err: unknown) => {
      // Only the server's own answer to initialize; a guard's verdict (an AcpError for another method) keeps its meaning.
      if (!(err instanceof AcpError) || err.method !== 'initialize') throw err;
      throw new AgyError(EXIT.server, 'protocol-error', `The server refused initialize: ${err.message}`, {
        hint: 'run `agyctl probe --verbose` to see the server start, or check its log',
        cause: err,
      });
    });

export const authenticate = (c: Connection, methodId: string, call: CallOptions): Promise<unknown> =>
  versioned(c, 'authenticate', { v1: { methodId }, v2: { methodId } }, call);

export async function newSession(c: Connection, cwd: string, call: CallOptions): Promise<NewSessionResult> {
  const result = await c.request<NewSessionResult>('session/new', { cwd, mcpServers: [] }, call);
  if (!result || typeof result.sessionId !== 'string')
    throw new AcpError('session/new', { code: -32603, message: 'answer has no sessionId' });
  if (!isUuid(result.sessionId)) throw badSessionId(result.sessionId);
  return result;
}

/** Session ids are UUIDs (reference: chosen by the server); anything else is a protocol break, and never becomes a path. */
function badSessionId(id: string): AgyError {
  return new AgyError(
    EXIT.server,
    'protocol-bad-session-id',
    `The server broke the protocol: session/new answered with session id ${showUntrusted(redactText(id))}, which is not a UUID. agyctl removed nothing.`,
    {
      hint: 'check that --server (or AGYCTL_SERVER) runs the real antigravity-acp server; run with --trace FILE to see its answer',
    },
  );
}

export const loadSession = (
  c: Connection,
  sessionId: string,
  cwd: string,
  call: CallOptions,
): Promise<NewSessionResult> => {
  const v1 = { sessionId, cwd, mcpServers: [] };
  // v2 resumes without history unless asked: the replay is what callers load a session for.
  return versioned(c, 'loadSession', { v1, v2: { ...v1, replayFrom: { type: 'start' } } }, call);
};

export const closeSession = (c: Connection, sessionId: string, call: CallOptions): Promise<unknown> =>
  c.request('session/close', { sessionId }, call);

/** One session's config option set to a value (the model, for one). */
export interface ConfigChange {
  sessionId: string;
  configId: string;
  value: string;
}

export const setConfigOption = (
  c: Connection,
  change: ConfigChange,
  call: CallOptions,
): Promise<{ configOptions?: Array<{ id: string; currentValue?: unknown }> }> =>
  c.request(
    'session/set_config_option',
    { sessionId: change.sessionId, configId: change.configId, value: change.value },
    call,
  );

export const logout = (c: Connection, call: CallOptions): Promise<unknown> =>
  versioned(c, 'logout', { v1: {}, v2: {} }, call);

/** v1: `agentCapabilities.auth.logout`. v2 advertises `auth/logout` by a non-empty `authMethods` list instead. */
export function supportsLogout(init: InitializeResult): boolean {
  const auth = init.agentCapabilities?.auth;
  if (auth && typeof auth === 'object' && auth.logout !== undefined && auth.logout !== null) return true;
  return v2Spelled.has(init) && Array.isArray(init.authMethods) && init.authMethods.length > 0;
}

/** Whether the server answers `auth/status` (v1 `agentCapabilities.auth.status`; v2 `capabilities.auth.status`). */
export function supportsAuthStatus(init: InitializeResult): boolean {
  const auth = init.agentCapabilities?.auth;
  return Boolean(auth && typeof auth === 'object' && auth.status !== undefined && auth.status !== null);
}

export type AuthState = 'authenticated' | 'unauthenticated' | 'not_required' | 'unknown';
const AUTH_STATES: readonly string[] = ['authenticated', 'unauthenticated', 'not_required', 'unknown'];

/** The account an auth status names: for display only (the email is personal data: shown, never traced or a label). */
export interface AuthAccount {
  label: string;
  email: string | undefined;
}

export interface AuthStatus {
  /** A state agyctl does not know reads as `unknown` (the schema says so). */
  state: AuthState;
  account: AuthAccount | undefined;
}

const shownField = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? serverText(v, { singleLine: true }).slice(0, 200) : undefined;

/** `auth/status` or its push (`auth/status_update`, vendors' `_auth/status_update`): the state and the account in effect. */
export function readAuthStatus(raw: unknown): AuthStatus {
  const r = (raw && typeof raw === 'object' ? raw : {}) as { state?: unknown; accounts?: unknown };
  const state = typeof r.state === 'string' && AUTH_STATES.includes(r.state) ? (r.state as AuthState) : 'unknown';
  const accounts = Array.isArray(r.accounts) ? r.accounts.filter((a) => a && typeof a === 'object') : [];
  const chosen = (accounts.find((a) => (a as { active?: unknown }).active === true) ?? accounts[0]) as
    | { label?: unknown; email?: unknown }
    | undefined;
  const label = shownField(chosen?.label);
  return { state, account: label ? { label, email: shownField(chosen?.email) } : undefined };
}

/**
 * The pushes that carry an auth status: ACP's `auth/status_update` (same fields as `auth/status`) and the vendor
 * `_auth/status_update` some agents send instead. A push is display only: `authenticate`'s answer decides a sign-in.
 */
export const AUTH_STATUS_PUSHES: readonly string[] = ['auth/status_update', '_auth/status_update'];

/** JSON-RPC's cancellation notification in ACP (`{requestId}`): either side withdraws a request it sent. */
export const CANCEL_REQUEST = '$/cancel_request';

/** The request a `$/cancel_request` names, or undefined when its params name none. */
export function cancelledRequestId(params: unknown): string | number | undefined {
  const id = (params as { requestId?: unknown } | null | undefined)?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * agyctl gives up on its sign-in (deadline, Ctrl-C, a failure): on a v2 connection each pending `authenticate` /
 * `auth/login` is withdrawn with `$/cancel_request` first, so the server can drop its listener itself. v1 servers are
 * told nothing (RC01 never documented the notification); stopping the server ends the flow either way.
 */
export function cancelSignIn(c: Connection): number {
  if (protocolVersionOf(c) !== 2) return 0;
  const ids = c.pendingIds(isAuthenticateMethod);
  for (const requestId of ids) c.notify(CANCEL_REQUEST, { requestId });
  return ids.length;
}

/** Asks the state without changing it (the schema forbids answering it with auth_required). */
export const authStatus = async (c: Connection, call: CallOptions): Promise<AuthStatus> =>
  readAuthStatus(await c.request('auth/status', {}, call));

/** The model a session is using, from `models.currentModelId` or the `model` config option. */
export function currentModel(result: NewSessionResult): string | undefined {
  if (result.models?.currentModelId) return result.models.currentModelId;
  const option = (result.configOptions as Array<{ id: string; currentValue?: unknown }> | undefined)?.find(
    (option) => option.id === 'model',
  );
  return typeof option?.currentValue === 'string' ? option.currentValue : undefined;
}

export type AuthProblem = 'not-authenticated' | 'reauth-required';

const REAUTH = /invalid_grant|invalid_rapt|re-?auth|expired|revoked|refresh (?:token )?failed|reauthenticat/i;
// gemini-cli with no auth type selected falls back to an API key: "Gemini API key is missing or not configured."
const NOT_AUTH =
  /authentication required|no authentication method|not authenticated|unauthenticated|login required|please log ?in|api key is missing/i;

/** What an error from session/new or session/load says about the credentials, if anything. */
export function classifyAuthError(err: unknown): AuthProblem | undefined {
  if (!(err instanceof AcpError)) return undefined;
  const text = err.serverText;
  if (REAUTH.test(text)) return 'reauth-required';
  if (NOT_AUTH.test(text)) return 'not-authenticated';
  return undefined;
}

export interface InitDescription {
  agent: { name: string | null; title: string | null; version: string | null };
  protocolVersion: number | null;
  authMethods: string[];
  /** Each advertised method's type (`agent` when the server gives none), by id. */
  authMethodTypes: Record<string, string>;
  capabilities: Record<string, unknown>;
}

/** Server-given names, one line, redacted: they are printed and stored. */
const safeName = (v: unknown): string | null =>
  v === undefined || v === null ? null : serverText(String(v), { singleLine: true });

export function describeInit(init: InitializeResult): InitDescription {
  return {
    agent: {
      name: safeName(init.agentInfo?.name),
      title: safeName(init.agentInfo?.title),
      version: safeName(init.agentInfo?.version),
    },
    protocolVersion: typeof init.protocolVersion === 'number' ? init.protocolVersion : null,
    authMethods: Array.isArray(init.authMethods) ? init.authMethods.map((m) => safeName(m.id) ?? '') : [],
    authMethodTypes: Object.fromEntries(
      (Array.isArray(init.authMethods) ? init.authMethods : []).map((m) => [
        safeName(m.id) ?? '',
        safeName(methodType(m)) ?? 'agent',
      ]),
    ),
    capabilities: (serverValue(init.agentCapabilities) as Record<string, unknown> | undefined) ?? {},
  };
}

export interface ProbeSessionResult {
  sessionId: string;
  model: string | undefined;
  ms: number;
}

export function makeProbeCwd(env: NodeJS.ProcessEnv): string {
  return fs.mkdtempSync(path.join(tempRoot(env), 'agyctl-probe-'));
}

/** Remove a probe conversation's db, WAL, shm and meta files (and the server's brain dir for it). */
export function removeConversation(stateDir: string, sessionId: string): boolean {
  if (!isUuid(sessionId)) return false; // only UUIDs ever become paths (a server answering `..` must not steer an rm -rf)
  const files = conversationFiles(stateDir, sessionId);
  for (const f of [files.db, files.wal, files.shm, files.meta]) fs.rmSync(f, { force: true });
  fs.rmSync(childPath(path.join(stateDir, 'brain'), sessionId), { recursive: true, force: true });
  return !fs.existsSync(files.db);
}

export async function runProbeSession(
  conn: Connection,
  env: NodeJS.ProcessEnv,
  options: CallOptions,
): Promise<ProbeSessionResult> {
  const cwd = makeProbeCwd(env);
  const started = Date.now();
  try {
    const session = await newSession(conn, cwd, options);
    try {
      await closeSession(conn, session.sessionId, options);
    } catch {
      // Older builds may lack session/close; the session is still proven.
    }
    return { sessionId: session.sessionId, model: currentModel(session), ms: Date.now() - started };
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}
