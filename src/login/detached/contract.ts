/**
 * The login's contract between its two processes (docs/architecture.md):
 * what the starting agyctl asks the supervisor to run (request.json), and
 * the events a login emits — streamed to attached clients, tracked into the
 * record, answered by `login finish`, relayed by `connect`, and printed as
 * NDJSON with --json (docs/json.md). One type each, used by every reader.
 */

import type { ServerTarget } from '../../core/io.js';
import type { UnexpectedClient } from '../../profiles/auth-url.js';
import type { TerminalSize } from '../qr.js';
import type { TunnelTarget } from '../tunnel.js';

/**
 * `agyctl login`'s options: its flags checked once (src/cli/commands/login/handler.ts), the one type
 * from the command line through request.json to runLogin.
 */
export interface LoginOptions {
  method: string | undefined;
  timeoutMs: number;
  target: TunnelTarget;
  qr: boolean;
  open: boolean;
  fakeDisplay: boolean;
  keepProbeSession: boolean;
  proofTimeoutMs: number;
  /** `login --detach`: the foreground command returns once the URL is shown. */
  detached: boolean;
  /** false when stdin cannot bring a paste (`</dev/null`, closed): the address goes to `agyctl login finish` then. */
  stdinPastes: boolean;
  /** --restart: cancel a pending login of this state dir first. */
  restart: boolean;
  /** --force: replace a credential `check` accepts without asking. */
  force: boolean;
}

/** The global options the login runs with (the CLI's GlobalOptions, as written to request.json). */
export interface RequestOptions extends ServerTarget {
  json: boolean;
  color: boolean;
  verbose: boolean;
  trace: string | undefined;
}

/** request.json (0600, in the record dir): the login's options and the global options; never the environment. */
export interface LoginRequest {
  version: 1;
  id: string;
  cwd: string;
  startedAt: number;
  /** When the sign-in wait ends (startedAt + --timeout). */
  deadline: number;
  /** The supervisor gives up by then whatever happens (the proof included). */
  hardDeadline: number;
  opts: RequestOptions;
  login: LoginOptions;
  /**
   * Whether the starting agyctl's stdout/stderr were terminals: the login colours its output as it would there.
   * The size of its stderr terminal when known at the start (`login --qr` draws the code only when it fits).
   */
  tty: { stdout: boolean; stderr: boolean; stderrSize?: TerminalSize };
}

/**
 * The account a sign-in ended with, in the server's words (sanitised and redacted): `label` as the server names it,
 * `email` when it gives one. `source` says who named it: `server` (auth/status or its push) or `google_accounts.json`
 * (gemini-cli's own record, read locally).
 */
export interface SignedInAccount {
  label: string;
  email: string | null;
  source: 'server' | 'google_accounts.json';
}

export type UrlSource = 'shim' | 'launcher-file' | 'stdout' | 'stderr' | 'rpc' | 'remote' | (string & {});

/** Every event a login emits, by name (docs/json.md, "login (NDJSON events)"). */
export type LoginEvent =
  | {
      event: 'server-started';
      pid: number;
      agent: { name: string | null; title: string | null; version: string | null };
      ms: number;
    }
  | {
      event: 'url';
      url: string;
      mode?: 'loopback' | 'code-entry' | 'device';
      port?: number;
      redirectUri: string;
      tunnel?: string;
      method?: string;
      source?: UrlSource;
      via?: string;
      /** The URL names a client_id or scopes that are not the profile's known ones (shown as a warning). */
      unexpectedClient?: UnexpectedClient;
    }
  | { event: 'url-rejected'; source: UrlSource; reason: string; loud?: boolean; via?: string; url?: string }
  | { event: 'no-url-yet'; afterS: number }
  | { event: 'waiting'; elapsedS: number; remainingS: number }
  | { event: 'redirect-rejected'; reason: string }
  | { event: 'redirect-delivered'; status: number }
  | { event: 'code-rejected'; reason: string }
  | { event: 'code-sent' }
  | { event: 'authenticated'; method: string }
  /** The server withdrew the URL it had asked the user to open (`$/cancel_request` of its elicitation). */
  | { event: 'url-withdrawn'; elicitationId: string; graceS: number }
  /** The server pushed its auth status (`auth/status_update`, or a vendor's `_auth/status_update`). */
  | { event: 'auth-status'; state: string; account?: SignedInAccount }
  | {
      event: 'settings-changed';
      by: 'server' | 'agyctl';
      authTypeBefore: unknown;
      authTypeAfter: unknown;
    }
  | { event: 'profile-detected'; profile: string; stateDir: string }
  | {
      event: 'verified';
      tokenFile?: { mode: string | undefined };
      credentials?: 'token-file' | 'elsewhere';
      sessionProbe: { removed: boolean; sessionId?: string };
      serverStartMs: number;
      /** Whom the server says it signed in (personal data: shown, never traced or a metric label). */
      account?: SignedInAccount;
    }
  | { event: 'restarted'; cancelled: string }
  | {
      event: 'detached';
      id: string;
      pid: number;
      url: string | null;
      port: number | null;
      tunnel: string | null;
      deadline: string;
    };

export type LoginEventName = LoginEvent['event'];

/** The supervisor's answer to `finish` (the answer event is kept for clients of an older version). */
export interface FinishAnswer {
  ok: boolean;
  reason?: string;
  /** The listener's HTTP status for a delivered redirect. */
  status?: number;
  /** Nothing was delivered because the sign-in had already arrived (through the tunnel, or an earlier paste). */
  arrived?: boolean;
  event?: LoginEvent;
}

/** The events that answer a delivered paste (`login finish` waits for one of them). */
export const ANSWER_EVENTS: ReadonlySet<LoginEventName> = new Set<LoginEventName>([
  'redirect-delivered',
  'redirect-rejected',
  'code-sent',
  'code-rejected',
]);

/**
 * An event as the supervisor's tap (or an attached client) receives it:
 * the login's own steps carried it, so the name is one of ours; a value
 * without a string `event` is not an event.
 */
export function asLoginEvent(value: unknown): LoginEvent | undefined {
  if (!value || typeof value !== 'object' || typeof (value as { event?: unknown }).event !== 'string') return undefined;
  return value as LoginEvent;
}

/**
 * Set in a login's environment by `connect` for its remote login: once the SSH session that attached it
 * is gone and no one asks after the login for this long (a duration), the login cancels itself.
 */
export const ORPHAN_GRACE_VAR = 'AGYCTL_LOGIN_ORPHAN_GRACE';
