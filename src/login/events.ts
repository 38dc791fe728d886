/**
 * What a login says, one typed event at a time, in order: the one union
 * every use case of a login emits (the sign-in and its proof in the
 * supervisor, the start and the attachment in the foreground) and every
 * printer renders (src/cli/commands/login/printers.ts). The use cases never
 * write text. And the rest of the contract between a login's two processes
 * (docs/architecture.md): what the starting agyctl asks the supervisor to
 * run (request.json), and how the supervisor answers `login finish`.
 *
 * An event of the public contract (docs/json.md, "login (NDJSON events)")
 * carries its NDJSON fields first, in the contract's order; fields marked
 * "person only" come after them and are what a person is told besides
 * (the printers' `jsonLine` leaves them out). The events without a line
 * of their own (`PERSON_ONLY`) are said to a person only.
 */
import type { ServerNote, ServerTarget } from '../core/io.js';
import type { UnexpectedClient } from '../profiles/auth-url.js';
import type { LoginState, SignedInAccount } from './record.js';

export type { SignedInAccount } from './record.js';

export type UrlSource = 'shim' | 'launcher-file' | 'stdout' | 'stderr' | 'rpc' | 'remote' | (string & {});

/** The events of the public contract, each an NDJSON line of `login --json`. */
export type PublicLoginEvent =
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
      /** Person only: the agent's own words with an elicited URL (sanitised, redacted). */
      message?: string;
      /** Person only: a new code-entry URL after a code the server could not use. */
      retry?: true;
    }
  | {
      event: 'url-rejected';
      source: UrlSource;
      reason: string;
      loud?: boolean;
      via?: string;
      url?: string;
      /** Person only: the sanitised description of the candidate. */
      text?: string;
    }
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
  | {
      event: 'auth-status';
      state: string;
      account?: SignedInAccount;
      /** Person only: the notification the server pushed it with. */
      pushedWith?: string;
    }
  | {
      event: 'settings-changed';
      by: 'server' | 'agyctl';
      authTypeBefore: unknown;
      authTypeAfter: unknown;
      /** Person only: the settings key of the auth type (`auth.type`, `security.auth.selectedType`). */
      key?: string;
      /** Person only: this server records its method in settings.json by design. */
      expected?: boolean;
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
      /** Person only: the login shows a device page (nothing for `login finish` to deliver). */
      devicePage?: true;
    };

/** What a person is told besides the contract's lines, in both modes (warnings and notes on stderr, --verbose detail). */
type PersonEvent =
  /** settings.json names another method than --method (said once the server offers it); `canSetAuth`: set-auth can fix it. */
  | { event: 'method-mismatch'; key: string; configured: string; requested: string; canSetAuth: boolean }
  /** The server gives up on a sign-in sooner than --timeout. */
  | { event: 'sign-in-window'; title: string; minutes: number }
  /** A shim directory left by a login that was killed, removed. */
  | { event: 'stale-login-dir-removed'; dir: string }
  | { event: 'sign-in-before-initialize' }
  /** The server's redirect path is not its profile's: drift worth a note (the server's path is used). */
  | { event: 'redirect-path-differs'; path: string; profile: string; expected: string }
  /** `elicitation/complete`: the browser step ended; the authenticate answer decides. */
  | { event: 'page-step-ended' }
  /** --open could not open the URL: no display of this shell's own, or the browser failed to start. */
  | { event: 'browser-not-opened'; error?: string }
  | { event: 'token-file-missing'; path: string }
  | { event: 'token-file-narrowed'; path: string; from: string }
  | { event: 'auth-type-differs'; key: string; current: unknown; method: string; canSetAuth: boolean }
  | { event: 'credentials-elsewhere'; tokenFile: string }
  /**
   * What the layers under the login said through the supervisor's reporter: a fact (the server's output and
   * start-up for --verbose, the profile it turned out to be), or a sentence; rendered by the terminal's printer.
   */
  | { event: 'server-note'; note: ServerNote }
  | { event: 'said'; how: 'print' | 'info' | 'warn' | 'verbose'; text: string; verbatim?: true }
  /** The login succeeded: what a person is told at the end (the `verified` line says it for --json). */
  | {
      event: 'logged-in';
      method: string;
      serverStartMs: number;
      account?: SignedInAccount;
      tokenFile?: { path: string; mode: string | undefined };
      keptProbeSession?: string;
    }
  // The foreground's own: starting under a supervisor and staying attached to it.
  /** Refused: a login is pending already (the lines after the error's first). */
  | { event: 'pending'; state: LoginState }
  | { event: 'restarting'; pid: number }
  | { event: 'previous-died'; pid: number }
  /** A paste after the sign-in arrived. */
  | { event: 'already-arrived' }
  | { event: 'undelivered' }
  | { event: 'cancelling' };

/** Every event a login emits. */
export type LoginEvent = PublicLoginEvent | PersonEvent;
export type LoginEventName = LoginEvent['event'];
export type LoginEventOf<N extends LoginEventName> = Extract<LoginEvent, { event: N }>;

/** The events that have no NDJSON line. */
export const PERSON_ONLY: { readonly [N in PersonEvent['event']]: true } = {
  'method-mismatch': true,
  'sign-in-window': true,
  'stale-login-dir-removed': true,
  'sign-in-before-initialize': true,
  'redirect-path-differs': true,
  'page-step-ended': true,
  'browser-not-opened': true,
  'token-file-missing': true,
  'token-file-narrowed': true,
  'auth-type-differs': true,
  'credentials-elsewhere': true,
  'server-note': true,
  said: true,
  'logged-in': true,
  pending: true,
  restarting: true,
  'previous-died': true,
  'already-arrived': true,
  undelivered: true,
  cancelling: true,
};

/** Whether an event is one of the contract's (an NDJSON line, tracked by the supervisor and relayed to clients). */
export const isPublicLoginEvent = (e: LoginEvent): e is PublicLoginEvent => !(e.event in PERSON_ONLY);

/** Where a login's events go: the command's printer. A URL may draw a QR code first, so showing one can take a moment. */
export type ShowLoginEvent = (event: LoginEvent) => void | Promise<void>;

/** The events that answer a delivered paste (`login finish` waits for one of them). */
export const ANSWER_EVENTS: ReadonlySet<LoginEventName> = new Set<LoginEventName>([
  'redirect-delivered',
  'redirect-rejected',
  'code-sent',
  'code-rejected',
]);

// --- the request the supervisor runs, and its answer to `login finish` ---

/** Where the laptop's SSH reaches this box, for the tunnel command (--ssh-target, else guessed: present.ts). */
export interface TunnelTarget {
  user: string | undefined;
  host: string;
  port: number | undefined;
}

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

/** The global options the login runs with: its server and state dir, and --trace. How it is shown is the clients' business. */
export interface RequestOptions extends ServerTarget {
  trace: string | undefined;
}

/** request.json (0600, in the record dir): the login's options and the server it runs; never the environment or a terminal's facts. */
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
}

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

/**
 * Set in a login's environment by `connect` for its remote login: once the SSH session that attached it
 * is gone and no one asks after the login for this long (a duration), the login cancels itself.
 */
export const ORPHAN_GRACE_VAR = 'AGYCTL_LOGIN_ORPHAN_GRACE';
