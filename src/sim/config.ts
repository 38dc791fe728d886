// Env switches of the simulator. Everything that makes the sim deviate from a
// plain, well-behaved RC01 server is opt-in through one of these variables, so
// a test states the quirk it exercises in its own environment block.
// docs/simulator.md documents each switch; keep the two in sync.

export type LaunchMode = 'default' | 'xdg-only' | 'display-only' | 'stdout' | 'stderr' | 'none' | CaptureLaunchMode;

// --- URL capture area (how other builds show the sign-in URL): more launch paths, and a token kept outside the state dir. ---
/** Launch paths real launcher libraries and newer builds use (docs/simulator.md). */
export type CaptureLaunchMode =
  | 'gio'
  | 'kioclient'
  | 'browser-template'
  | 'browser-list'
  | 'osc8'
  | 'colour-split'
  | 'rpc-notification'
  | 'rpc-request'
  | 'meta-response'
  | 'error-data'
  | 'split-lines'
  | 'split-write'
  | 'box'
  | 'box-ascii'
  | FileLaunchMode;
/** Launchers handed a local file that leads to the URL instead of the URL: an HTML page by path or file:// URL, a .desktop or .url file. */
export type FileLaunchMode = 'html-file' | 'html-file-url' | 'desktop-file' | 'url-file';
export const CAPTURE_LAUNCH_MODES: readonly CaptureLaunchMode[] = [
  'gio',
  'kioclient',
  'browser-template',
  'browser-list',
  'osc8',
  'colour-split',
  'rpc-notification',
  'rpc-request',
  'meta-response',
  'error-data',
  'split-lines',
  'split-write',
  'box',
  'box-ascii',
  'html-file',
  'html-file-url',
  'desktop-file',
  'url-file',
];
/**
 * file: acp_token.json in the state dir. keyring: a file under $HOME/.local/share/agy-sim-keyring/ (like an OS
 * keyring: outside the state dir). ssh-aware: like Google's `agy` CLI, the file when SSH_CONNECTION, SSH_CLIENT or
 * SSH_TTY is set, the keyring otherwise, and a keyring write that fails silently without D-Bus.
 */
export type TokenStore = 'file' | 'keyring' | 'ssh-aware';
const TOKEN_STORES: readonly TokenStore[] = ['file', 'keyring', 'ssh-aware'];

const SSH_SESSION_VARS = ['SSH_CONNECTION', 'SSH_CLIENT', 'SSH_TTY'] as const;

/** Where this process keeps its token, and whether a write there persists (ssh-aware: the keyring needs D-Bus). */
export function resolveTokenStore(store: TokenStore, env: Env): { store: 'file' | 'keyring'; writeFails: boolean } {
  if (store !== 'ssh-aware') return { store, writeFails: false };
  if (SSH_SESSION_VARS.some((k) => (env[k] ?? '') !== '')) return { store: 'file', writeFails: false };
  return { store: 'keyring', writeFails: (env.DBUS_SESSION_BUS_ADDRESS ?? '') === '' };
}
// --- end URL capture area ---
export type NoiseMode = 'off' | 'garbage' | 'ansi' | 'both';

// --- ACP URL elicitation: builds that show the sign-in page through `elicitation/create`. ---
/** off: RC01 (no elicitation). only: the URL goes only through elicitation. also: elicitation and AGY_SIM_LAUNCH both. */
export type ElicitationMode = 'off' | 'only' | 'also';
/** loopback: the usual Google URL with its 127.0.0.1 listener. device: a device-code page the sim approves itself. */
export type ElicitationPage = 'loopback' | 'device';

function elicitationSwitches(env: Env) {
  return {
    mode: choice(env, 'AGY_SIM_ELICITATION', ['off', 'only', 'also'] as const, 'off') as ElicitationMode,
    page: choice(env, 'AGY_SIM_ELICITATION_PAGE', ['loopback', 'device'] as const, 'loopback') as ElicitationPage,
    /** device: the user finishes on the page this long after the client accepts. */
    deviceApproveMs: intVar(env, 'AGY_SIM_DEVICE_APPROVE_MS', 0) ?? 500,
    /** Send elicitation/complete right after the client accepts, before the sign-in has ended. */
    completeEarly: flag(env, 'AGY_SIM_ELICITATION_COMPLETE_EARLY'),
    /** A hostile server's sign-in: bidi and zero-width characters and a lookalike URL in the message, another OAuth client and scope in the URL. */
    hostile: flag(env, 'AGY_SIM_HOSTILE_SIGN_IN'),
    /** Withdraw the elicited URL after the client accepts it: then fail the sign-in, or never answer it. */
    withdraw: choice(env, 'AGY_SIM_ELICITATION_WITHDRAW', ['off', 'fail', 'silent'] as const, 'off'),
    /** How long after the client accepts the URL is withdrawn. */
    withdrawMs: intVar(env, 'AGY_SIM_ELICITATION_WITHDRAW_MS', 0) ?? 300,
  };
}
export type ElicitationSwitches = ReturnType<typeof elicitationSwitches>;
// --- end ACP URL elicitation ---

// --- assumptions area: "the other shape" of what the reference leaves open (docs/assumptions.md). ---
/** rc01: google-auth-library field names. renamed: the same facts under other names. no-expiry: rc01's without expiry_date. opaque: not JSON at all. */
export type TokenShape = 'rc01' | 'renamed' | 'no-expiry' | 'opaque';
/** rc01: `<uuid>.db` (+ -wal, -shm). sqlite: `<uuid>.sqlite` (+ -wal, -shm), a name agyctl does not know. */
export type ConversationNaming = 'rc01' | 'sqlite';
/** rc01: `{"cwd"}`. extended: more keys beside cwd. renamed: the cwd under another key. none: no .meta file. */
export type MetaShape = 'rc01' | 'extended' | 'renamed' | 'none';
/** rc01: one chunk per replayed message (full text). chunked: each replayed message in two chunks. user-only: the prompts, no answers. */
export type ReplayShape = 'rc01' | 'chunked' | 'user-only';
/** rc01: RC01's initialize result. other: another agent name, other auth method ids, no loadSession, no auth.logout, protocol 2. */
export type InitShape = 'rc01' | 'other';

export interface AssumptionSwitches {
  tokenShape: TokenShape;
  /** The token file's access token is already expired (its refresh token renews it at first use). */
  tokenExpired: boolean;
  conversationNaming: ConversationNaming;
  metaShape: MetaShape;
  replayShape: ReplayShape;
  initShape: InitShape;
}

function assumptionSwitches(env: Env): AssumptionSwitches {
  return {
    tokenShape: choice(env, 'AGY_SIM_TOKEN_SHAPE', ['rc01', 'renamed', 'no-expiry', 'opaque'] as const, 'rc01'),
    tokenExpired: flag(env, 'AGY_SIM_TOKEN_EXPIRED'),
    conversationNaming: choice(env, 'AGY_SIM_CONVERSATION_NAMING', ['rc01', 'sqlite'] as const, 'rc01'),
    metaShape: choice(env, 'AGY_SIM_META_SHAPE', ['rc01', 'extended', 'renamed', 'none'] as const, 'rc01'),
    replayShape: choice(env, 'AGY_SIM_REPLAY_SHAPE', ['rc01', 'chunked', 'user-only'] as const, 'rc01'),
    initShape: choice(env, 'AGY_SIM_INIT_SHAPE', ['rc01', 'other'] as const, 'rc01'),
  };
}
// --- end assumptions area ---

// --- proofs area: servers whose tables, replays and credential writes differ. ---
/** rc01: RC01's seven tables, one gen_metadata row per turn. other: no gen_metadata, an extra table, three steps per turn. */
export type TablesShape = 'rc01' | 'other';

export interface ProofSwitches {
  tables: TablesShape;
  /** session/load replays one message less (the last one). */
  replayDropLast: boolean;
  /** session/load replays the message at this 0-based index with altered text. */
  replayAlter: number | undefined;
  /** After each session/load, rewrite settings.json and acp_token.json in place (O_TRUNC): in the sim's own state dir (`own`) or in this absolute state dir. */
  rewriteCredentials: string | undefined;
}

function proofSwitches(env: Env): ProofSwitches {
  const rewrite = nonEmpty(env, 'AGY_SIM_REWRITE_CREDENTIALS');
  if (rewrite !== undefined && rewrite !== 'own' && !rewrite.startsWith('/'))
    throw new ConfigError(`AGY_SIM_REWRITE_CREDENTIALS must be 'own' or an absolute state dir, got '${rewrite}'`);
  return {
    tables: choice(env, 'AGY_SIM_TABLES', ['rc01', 'other'] as const, 'rc01'),
    replayDropLast: flag(env, 'AGY_SIM_REPLAY_DROP_LAST'),
    replayAlter: intVar(env, 'AGY_SIM_REPLAY_ALTER', 0),
    rewriteCredentials: rewrite,
  };
}
// --- end proofs area ---

export interface SimConfig {
  /** Cold-start delay, measured from process start, before any request is served. */
  startupMs: number;
  /** Server build string reported in initialize.agentInfo.version. */
  version: string;
  /** How the OAuth URL reaches the user (RC01: a browser launch only). */
  launch: LaunchMode;
  /** Onboarding window of an OAuth authenticate call. */
  onboardTimeoutMs: number;
  /** Path of the loopback redirect ("/" on RC01, "/oauth2callback" on gemini-cli). */
  callbackPath: string;
  /** Fixed listener port (like OAUTH_CALLBACK_PORT); 0 = random. */
  callbackPort: number;
  /** Exit 70 this many ms after the OAuth listener starts. */
  crashWhileWaitingMs: number | undefined;
  /** Close the OAuth listener this many ms after it starts, authenticate stays pending. */
  dropListenerMs: number | undefined;
  noise: NoiseMode;
  /** Every session/load fails with "Session not found". */
  forgetSessions: boolean;
  /** The stored token is revoked: auth from acp_token.json fails at first use. */
  tokenRevoked: boolean;
  /** A successful oauth-personal login rewrites settings.json auth.type. */
  authWritesSettings: boolean;
  /** A prompt first asks the client session/request_permission. */
  permissionPrompt: boolean;
  /** Background steps writes (~20 KB) every N ms while a session is open. */
  writeIntervalMs: number | undefined;
  ignoreSigterm: boolean;
  /** Extra bytes of _meta.padding in the initialize result. */
  hugeLineBytes: number;
  /** Close (and so checkpoint) the conversation DBs on stdin EOF. */
  checkpointOnExit: boolean;
  /** settings.json may hold line and block comments, skipped as gemini-cli skips them (RC01 is not known to). */
  settingsComments: boolean;
  /** Where a login keeps its credentials (URL capture area). */
  tokenStore: TokenStore;
  /** An OAuth authenticate rewrites settings.json auth.type as soon as it starts, before any sign-in (URL capture area). */
  authStartWritesSettings: boolean;

  // --- trust / data-loss switches: a hostile server that would steer a delete ---
  /** session/new answers with this sessionId instead of a UUID (`..`, `.`, anything); the db stays under a UUID. */
  sessionIdOverride: string | undefined;

  // --- trust-io: a hostile server's output (leaked tokens, endless lines, a closed stdout) ---
  /** Leak every known token shape: 'start' (stderr + stdout noise, then a failing session/new and a crash), 'init' (the same, failing initialize). */
  leakSecrets: LeakMode;
  /** Write one stdout line of N junk bytes (no newline until the end) before serving. */
  rawLineBytes: number;
  /** End stdout (the protocol channel) on this request and keep running. */
  closeStdout: 'off' | 'authenticate' | 'session/new';

  /** Assumptions area: the other plausible shape where the reference is silent (docs/assumptions.md). */
  shapes: AssumptionSwitches;

  /** Proofs area: replays that differ from the database, credentials rewritten in place. */
  proofs: ProofSwitches;

  /** ACP URL elicitation: builds that show the sign-in page through `elicitation/create`. */
  elicitation: ElicitationSwitches;

  /** ACP v2 and typed auth methods (src/sim/protocol-v2.ts). */
  protocol: ProtocolSwitches;
}

// --- ACP v2: the version the sim answers, and typed auth methods ---
/** v1: RC01. v2: only ACP v2's names (auth/login, auth/logout, session/resume, capabilities, info, methodId). v3: answers 3. */
export type ProtocolMode = 'v1' | 'v2' | 'v3';
export interface ProtocolSwitches {
  mode: ProtocolMode;
  /** Also advertise a `terminal` and an `env_var` method; each method carries its `type`. */
  methodTypes: boolean;
  /** off: no auth/status. on: advertised and answered from the sim's sign-in. unknown / unauthenticated: always that state. */
  authStatus: 'off' | 'on' | 'unknown' | 'unauthenticated';
  /** Push the auth status when a sign-in succeeds: ACP's `auth/status_update`, or a vendor's `_auth/status_update`. */
  authStatusPush: 'off' | 'standard' | 'vendor';
}
function protocolSwitches(env: Env): ProtocolSwitches {
  return {
    mode: choice(env, 'AGY_SIM_PROTOCOL', ['v1', 'v2', 'v3'] as const, 'v1'),
    methodTypes: flag(env, 'AGY_SIM_METHOD_TYPES'),
    authStatus: choice(env, 'AGY_SIM_AUTH_STATUS', ['off', 'on', 'unknown', 'unauthenticated'] as const, 'off'),
    authStatusPush: choice(env, 'AGY_SIM_AUTH_STATUS_PUSH', ['off', 'standard', 'vendor'] as const, 'off'),
  };
}

export type LeakMode = 'off' | 'session' | 'init';

export class ConfigError extends Error {}

const LAUNCH_MODES: readonly LaunchMode[] = [
  'default',
  'xdg-only',
  'display-only',
  'stdout',
  'stderr',
  'none',
  ...CAPTURE_LAUNCH_MODES,
];
const NOISE_MODES: readonly NoiseMode[] = ['off', 'garbage', 'ansi', 'both'];

export const DEFAULT_VERSION = 'agy_acp_server_20260818_01_RC01';
/** RC01's onboarding window is minutes-scale; one flow timed out at ~8.5 min. */
export const DEFAULT_ONBOARD_TIMEOUT_MS = 480_000;

type Env = Record<string, string | undefined>;

function nonEmpty(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function intVar(env: Env, name: string, min: number): number | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a non-negative integer, got '${raw}'`);
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got '${raw}'`);
  return n;
}

function flag(env: Env, name: string): boolean {
  const raw = nonEmpty(env, name);
  if (raw === undefined || raw === '0' || raw.toLowerCase() === 'false') return false;
  if (raw === '1' || raw.toLowerCase() === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got '${raw}'`);
}

function choice<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join('|')}, got '${raw}'`);
  }
  return raw as T;
}

/** AGY_SIM_IGNORE_SIGTERM, also read where a launch page's clean-up must leave SIGTERM alone. */
export const ignoresSigterm = (env: Env): boolean => flag(env, 'AGY_SIM_IGNORE_SIGTERM');

/** Reads the switches; a malformed value is a startup error (exit 2), never silently ignored. */
export function loadConfig(env: Env): SimConfig {
  const callbackPath = nonEmpty(env, 'AGY_SIM_CALLBACK_PATH') ?? '/';
  if (!callbackPath.startsWith('/'))
    throw new ConfigError(`AGY_SIM_CALLBACK_PATH must start with '/', got '${callbackPath}'`);
  const port = intVar(env, 'AGY_SIM_CALLBACK_PORT', 0) ?? 0;
  if (port > 65535) throw new ConfigError(`AGY_SIM_CALLBACK_PORT out of range: ${port}`);
  const tokenState = nonEmpty(env, 'AGY_SIM_TOKEN_STATE') ?? 'valid';
  if (tokenState !== 'valid' && tokenState !== 'revoked') {
    throw new ConfigError(`AGY_SIM_TOKEN_STATE must be valid|revoked, got '${tokenState}'`);
  }
  return {
    startupMs: intVar(env, 'AGY_SIM_STARTUP_MS', 0) ?? 0,
    version: nonEmpty(env, 'AGY_SIM_VERSION') ?? DEFAULT_VERSION,
    launch: choice(env, 'AGY_SIM_LAUNCH', LAUNCH_MODES, 'default'),
    onboardTimeoutMs: intVar(env, 'AGY_SIM_ONBOARD_TIMEOUT_MS', 1) ?? DEFAULT_ONBOARD_TIMEOUT_MS,
    callbackPath,
    callbackPort: port,
    crashWhileWaitingMs: intVar(env, 'AGY_SIM_CRASH_WHILE_WAITING_MS', 0),
    dropListenerMs: intVar(env, 'AGY_SIM_DROP_LISTENER_MS', 0),
    noise: choice(env, 'AGY_SIM_NOISE', NOISE_MODES, 'off'),
    forgetSessions: flag(env, 'AGY_SIM_FORGET_SESSIONS'),
    tokenRevoked: tokenState === 'revoked',
    authWritesSettings: flag(env, 'AGY_SIM_AUTH_WRITES_SETTINGS'),
    permissionPrompt: flag(env, 'AGY_SIM_PERMISSION_PROMPT'),
    writeIntervalMs: intVar(env, 'AGY_SIM_WRITE_INTERVAL_MS', 1),
    ignoreSigterm: ignoresSigterm(env),
    hugeLineBytes: intVar(env, 'AGY_SIM_HUGE_LINE_BYTES', 0) ?? 0,
    checkpointOnExit: flag(env, 'AGY_SIM_CHECKPOINT_ON_EXIT'),
    settingsComments: flag(env, 'AGY_SIM_SETTINGS_COMMENTS'),
    tokenStore: choice(env, 'AGY_SIM_TOKEN_STORE', TOKEN_STORES, 'file'),
    authStartWritesSettings: flag(env, 'AGY_SIM_AUTH_START_WRITES_SETTINGS'),

    // --- trust / data-loss switches: a hostile server that would steer a delete ---
    // Unset means a UUID; set (even to '.') means that exact string.
    sessionIdOverride:
      env.AGY_SIM_SESSION_ID === undefined || env.AGY_SIM_SESSION_ID === '' ? undefined : env.AGY_SIM_SESSION_ID,

    // --- trust-io: a hostile server's output ---
    leakSecrets: leakMode(env),
    rawLineBytes: intVar(env, 'AGY_SIM_RAW_LINE_BYTES', 0) ?? 0,
    closeStdout: choice(env, 'AGY_SIM_CLOSE_STDOUT', ['off', 'authenticate', 'session/new'] as const, 'off'),

    shapes: assumptionSwitches(env),

    proofs: proofSwitches(env),

    elicitation: elicitationSwitches(env),

    protocol: protocolSwitches(env),
  };
}

// --- trust-io: a hostile server's output ---
function leakMode(env: Env): LeakMode {
  const raw = nonEmpty(env, 'AGY_SIM_LEAK_SECRETS');
  if (raw === undefined || raw === '0') return 'off';
  if (raw === '1') return 'session';
  if (raw === 'init') return 'init';
  throw new ConfigError(`AGY_SIM_LEAK_SECRETS must be 0, 1 or init, got '${raw}'`);
}
