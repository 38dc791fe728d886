/** The shapes `agyctl check` produces; the JSON form is API (docs/json.md). */

/** What a check run was asked to do: its flags, checked by cli/commands/check/handler.ts. */
export interface CheckOptions {
  live: boolean;
  restart: boolean;
  prompt: boolean;
  model: string | undefined;
  timeoutMs: number;
  timeoutLabel: string;
  /** The Prometheus textfile to write the metrics to (an absolute path), if asked. */
  prometheus: string | undefined;
}

/** Overall outcome, worst first in STATUS_ORDER (status.ts). */
export type Status = 'ok' | 'not-authenticated' | 'reauth-required' | 'misconfigured' | 'server-error' | 'timeout';

export type Severity = 'error' | 'warning';

export interface CheckResult {
  id: string;
  ok: boolean;
  /** What a failure of this check means (its weight, also on a pass): an error fails the run, a warning does not. */
  severity: Severity;
  /** What this run found: `pass`, `warning` (failed, fails nothing) or `fail` (fails the run). */
  result?: 'pass' | 'warning' | 'fail';
  message: string;
  hint?: string;
  ms: number;
  /** A stable error code for a failure agyctl names precisely (e.g. `protocol-bad-session-id`). */
  code?: string;
  /** Which status a failed error-check stands for; not part of the JSON output. */
  failure?: Exclude<Status, 'ok'>;
  /** A static finding the live check decides (no usable token file): the note shown when live overrules it. Not part of the JSON output. */
  liveNote?: string;
  /** Set when the live check overruled this finding: it is shown as a note and fails nothing (JSON: `"decidedBy": "live"`). */
  decidedBy?: 'live';
  /** The signed-in account this check names (`auth-status`, gemini-cli's `account`): personal data, never a metric label. */
  account?: CheckAccount;
}

/** An account as a check names it, in the server's (or gemini-cli's record's) words, sanitised and redacted. */
export interface CheckAccount {
  label: string;
  email: string | null;
  source: 'server' | 'google_accounts.json';
}

/** What the token file says about the credential; never any of its values. */
export interface TokenInsight {
  mode: string;
  modeOk: boolean;
  ageS: number;
  /** A refresh token is in the file; null when the file's fields are not ones agyctl knows (a guess: docs/assumptions.md). */
  refreshToken: boolean | null;
  /** Seconds until the access token expires (negative: expired), when the file records it. */
  expiresInS: number | null;
  /** known: google-auth-library field names; unknown: a JSON object without them; not-json: contents agyctl cannot read. */
  fields: 'known' | 'unknown' | 'not-json';
}

export interface Metrics {
  tokenModeOk?: boolean;
  tokenAgeS?: number;
  /** Unix time (s) the token file was last written. */
  tokenWrittenS?: number;
  /** The token file holds a field agyctl recognises (access/refresh token, expiry): only then does a missing refresh token mean one. */
  tokenFieldsKnown?: boolean;
  /** A refresh token is in the token file (absent without a token file, or when its fields are not ones agyctl knows). */
  tokenRefresh?: boolean;
  /** Unix time (s) the access token expires, when the token file records it. */
  tokenExpiryS?: number;
  serverStartS?: number;
  /** The live check got a session although the token file is missing or unusable: the server keeps its credentials elsewhere. */
  credentialsElsewhere?: boolean;
}
