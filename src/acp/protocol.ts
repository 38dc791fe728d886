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

export const PROTOCOL_VERSION = 1;

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

export type InitializeResult = Partial<InitializeResponse> & {
  agentInfo?: { name?: string; title?: string; version?: string };
  authMethods?: Array<{ id: string; name?: string; description?: string | null }>;
  agentCapabilities?: Record<string, unknown> & { auth?: { logout?: unknown } };
};

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
    .request<InitializeResult>('initialize', initializeParams(version), call)
    .catch((err: unknown) => {
      if (!(err instanceof AcpError) || err.method !== 'initialize' || err.code !== -32602) throw err;
      return c.request<InitializeResult>('initialize', withoutElicitation(initializeParams(version)), call);
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
  c.request('authenticate', { methodId }, call);

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
): Promise<NewSessionResult> => c.request<NewSessionResult>('session/load', { sessionId, cwd, mcpServers: [] }, call);

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

export const logout = (c: Connection, call: CallOptions): Promise<unknown> => c.request('logout', {}, call);

export function supportsLogout(init: InitializeResult): boolean {
  const auth = init.agentCapabilities?.auth;
  return Boolean(auth && typeof auth === 'object' && auth.logout !== undefined && auth.logout !== null);
}

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
