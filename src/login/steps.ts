/**
 * What a login tells whoever shows it, one typed step at a time, in order.
 * The use cases never print: they hand steps to a printer the command picks
 * (text or --json, src/cli/commands/login/printers.ts). A step that has a
 * public NDJSON event (docs/json.md) carries it as `event`, built here so
 * its fields and their order are the contract's; the rest is what a person
 * is told besides.
 */
import type { LoginEvent } from './detached/contract.js';
import type { LoginState } from './detached/record.js';

type EventNamed<N extends LoginEvent['event']> = Extract<LoginEvent, { event: N }>;

/** Where the URL was caught: the channel (shim, launcher-file, stdout, stderr, rpc, elicitation) and the launcher or message. */
export interface UrlOrigin {
  source: string;
  via: string | undefined;
  /** The agent's own words with an elicited URL (sanitised, redacted). */
  message?: string | undefined;
}

/** The steps of one sign-in and its proof (run-login.ts and what it calls), in the supervisor. */
export type LoginStep =
  /** Events a person is not told about (server-started, waiting, redirect-delivered, code-sent, profile-detected). */
  | { step: 'event'; event: LoginEvent }
  /** A sign-in URL to open: loopback (with its tunnel), a device page, or code entry (`retry`: a new URL after a refused code). */
  | { step: 'url'; event: EventNamed<'url'>; origin?: UrlOrigin | undefined; retry?: boolean }
  /** A candidate that was not used; `text` is the sanitised description of it. */
  | { step: 'url-rejected'; event: EventNamed<'url-rejected'>; text: string }
  | { step: 'no-url-yet'; event: EventNamed<'no-url-yet'> }
  | { step: 'paste-refused'; event: EventNamed<'redirect-rejected' | 'code-rejected'> }
  /** settings.json names another method than --method (said once the server offers it). */
  /** `canSetAuth`: `agyctl settings set-auth <requested>` can fix it on this server. */
  | { step: 'method-mismatch'; key: string; configured: string; requested: string; canSetAuth: boolean }
  | { step: 'authenticated'; event: EventNamed<'authenticated'> }
  | { step: 'url-withdrawn'; event: EventNamed<'url-withdrawn'> }
  | { step: 'token-file-missing'; path: string }
  | { step: 'token-file-narrowed'; path: string; from: string }
  /** The server rewrote settings.json; `expected`: this server records its method by design. */
  | { step: 'settings-changed'; event: EventNamed<'settings-changed'>; key: string; expected: boolean }
  | { step: 'auth-type-written'; event: EventNamed<'settings-changed'>; key: string }
  | { step: 'auth-type-differs'; key: string; current: unknown; method: string; canSetAuth: boolean }
  | { step: 'credentials-elsewhere'; tokenFile: string }
  | { step: 'verified'; event: EventNamed<'verified'> };

/** The steps of the foreground side: starting under a supervisor and staying attached to it. */
export type StartStep =
  /** Refused: a login is pending already (the lines after the error's first). */
  | { step: 'pending'; state: LoginState }
  | { step: 'restarting'; pid: number }
  | { step: 'restarted'; event: EventNamed<'restarted'> }
  | { step: 'previous-died'; pid: number }
  /** A paste after the sign-in arrived. */
  | { step: 'already-arrived' }
  | { step: 'undelivered' }
  | { step: 'cancelling' }
  /** `login --detach` let go: the login goes on under its supervisor. */
  | { step: 'detached'; state: LoginState };

/** Where steps go: the command's printer. A URL step may draw a QR code first, so showing one can take a moment. */
export type ShowLoginStep = (step: LoginStep) => void | Promise<void>;
export type ShowStartStep = (step: StartStep) => void;
