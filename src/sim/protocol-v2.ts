// ACP v2 as a build that negotiated it would speak it (AGY_SIM_PROTOCOL=v2):
// the answer to initialize in v2's spelling, and v2's names for the methods
// agyctl calls (the v1 names then answer -32601, as a v2-only server would).
// AGY_SIM_PROTOCOL=v3 answers a version nobody speaks yet. AGY_SIM_METHOD_TYPES=1
// adds typed methods a client must never send to authenticate.
import type { ProtocolSwitches } from './config.js';
import { RpcError } from './errors.js';
import type { RpcConnection } from './rpc.js';

export const TERMINAL_METHOD = { id: 'agy-terminal', type: 'terminal', name: 'Sign in from a terminal' } as const;
export const ENV_VAR_METHOD = {
  id: 'agy-env-key',
  type: 'env_var',
  name: 'API key from the environment',
  vars: [{ name: 'GEMINI_API_KEY' }],
} as const;

const V2_NAMES: ReadonlyArray<readonly [v1: string, v2: string]> = [
  ['authenticate', 'auth/login'],
  ['logout', 'auth/logout'],
  ['session/load', 'session/resume'],
];

type Init = Record<string, unknown> & { authMethods?: Array<Record<string, unknown>> };

/** The initialize answer under these switches (the RC01 answer when both are off). */
export function shapeInitialize(raw: Init, sw: ProtocolSwitches): Record<string, unknown> {
  const init = sw.authStatus === 'off' ? raw : withAuthStatusCapability(raw);
  let methods = init.authMethods ?? [];
  if (sw.methodTypes || sw.mode === 'v2') methods = methods.map((m) => ({ ...m, type: 'agent' }));
  if (sw.methodTypes) methods = [...methods, { ...TERMINAL_METHOD }, { ...ENV_VAR_METHOD }];
  if (sw.mode === 'v3') return { ...init, authMethods: methods, protocolVersion: 3 };
  if (sw.mode !== 'v2') return { ...init, authMethods: methods };
  const { agentCapabilities, agentInfo, ...rest } = init;
  return {
    ...rest,
    protocolVersion: 2,
    info: agentInfo,
    capabilities: agentCapabilities,
    authMethods: methods.map(({ id, ...m }) => ({ methodId: id, ...m })),
  };
}

/** v2: the v1 method names go; their handlers answer under v2's names. session/resume replays only when asked. */
export function renameForV2(rpc: RpcConnection): void {
  for (const [v1, v2] of V2_NAMES) {
    const handler = rpc.handlerFor(v1);
    if (!handler) continue;
    rpc.off(v1);
    rpc.on(v2, (p, id) => {
      if (v2 === 'session/resume' && !replaysFromStart(p)) throw new RpcError(-32602, 'sim: replayFrom start expected');
      return handler(p, id);
    });
  }
}

function replaysFromStart(p: Record<string, unknown>): boolean {
  const r = p.replayFrom as { type?: unknown } | undefined;
  return typeof r === 'object' && r !== null && r.type === 'start';
}

/** A typed method that is the client's to run, sent to authenticate: a client bug the sim reports loudly. */
export function refuseClientSideMethods(rpc: RpcConnection): void {
  const name = rpc.handlerFor('authenticate') ? 'authenticate' : 'auth/login';
  const inner = rpc.handlerFor(name);
  rpc.on(name, (p, id) => {
    if (p.methodId === TERMINAL_METHOD.id || p.methodId === ENV_VAR_METHOD.id)
      throw new RpcError(-32600, `sim: ${String(p.methodId)} is a client-side method, never to be sent to ${name}`);
    return inner?.(p, id);
  });
}

/** The account the sim reports once signed in (personal data: agyctl shows it, never traces it). */
export const SIM_ACCOUNT = { label: 'Google account', email: 'sim-user@example.com', active: true } as const;
/** AGY_SIM_HOSTILE_SIGN_IN: an account whose label clears the screen and reverses text, and whose email hides a newline. */
export const HOSTILE_ACCOUNT = {
  label: '\u001b[2J\u001b]0;pwned\u0007Google \u202eaccount\u202c',
  email: 'sim-user@example.com\nroot@evil.example',
  active: true,
} as const;

const accountOf = (sw: { hostile: boolean }) => (sw.hostile ? { ...HOSTILE_ACCOUNT } : { ...SIM_ACCOUNT });

/** AGY_SIM_AUTH_STATUS_PUSH: the push a build sends once its sign-in succeeded. */
export function pushSignedIn(rpc: RpcConnection, sw: ProtocolSwitches, hostile: boolean): void {
  if (sw.authStatusPush === 'off') return;
  const method = sw.authStatusPush === 'vendor' ? '_auth/status_update' : 'auth/status_update';
  rpc.notify(method, { state: 'authenticated', accounts: [accountOf({ hostile })] });
}

function withAuthStatusCapability(init: Init): Init {
  const caps = (init.agentCapabilities ?? {}) as Record<string, unknown>;
  const auth = (caps.auth ?? {}) as Record<string, unknown>;
  return { ...init, agentCapabilities: { ...caps, auth: { ...auth, status: {} } } };
}

/** `auth/status`: the sim's sign-in as ACP's auth state (or the state the switch forces). */
export function registerAuthStatus(
  rpc: RpcConnection,
  sw: ProtocolSwitches,
  signedIn: () => boolean,
  hostile = false,
): void {
  if (sw.authStatus === 'off') return;
  rpc.on('auth/status', () => {
    if (sw.authStatus !== 'on') return { state: sw.authStatus, accounts: [] };
    return signedIn() ? { state: 'authenticated', accounts: [accountOf({ hostile })] } : { state: 'unauthenticated' };
  });
}
