/**
 * The one redaction of agyctl. Auth codes, OAuth state, tokens and keys
 * must never reach a file or a terminal, whatever the server (or a remote
 * agyctl) sends: every byte of server-derived text goes through
 * serverText() / serverValue() at its source (stderr tail, non-JSON
 * stdout, JSON-RPC error messages and data, the tracer), before anything
 * stores or prints it.
 */
import { sanitizeForTerminal } from '../util/terminal-text.js';

const SECRET_KEY =
  /^(code|state|code_verifier|code_challenge|e-?mail)$|token|secret|password|passwd|credential|api[-_]?key|apikey|^key$|[-_]key$|authorization|cookie/i;
export const REDACTED = '[REDACTED]';

/** Query parameters (and fragment parameters) whose values are secrets. */
const SECRET_PARAM =
  /([?&#](?:code|state|code_verifier|access_token|refresh_token|id_token|token|key|api_key|client_secret)=)[^&#\s"'\\]*/gi;
/** `code=` / `state=` outside a query string ("callback code=4/0Ab..."). */
const BARE_PARAM = /(\b(?:code|state|code_verifier)=)(?!\[REDACTED\])[^&#\s"'\\,;]+/gi;
/** JSON token fields inside text, plain or escaped inside another JSON string ({"refresh_token":"…"} or {\"refresh_token\":\"…\"}). */
const JSON_FIELD =
  /((?:\\?")(?:access_token|refresh_token|id_token|client_secret|api_key|apiKey|token|code)(?:\\?")\s*:\s*(?:\\?"))(?:[^"\\]|\\(?!"))*/g;
/** Environment-style assignments: GEMINI_API_KEY=…, *_TOKEN=…, *_SECRET=…, *_PASSWORD=…. */
const ENV_ASSIGN =
  /(\b[A-Za-z][A-Za-z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|key|token|secret|password)=)(?!\[REDACTED\])[^\s"'&,;]+/g;
/** Bearer tokens and Google token shapes that may appear in free text. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
const ACCESS_TOKEN = /\bya29\.[A-Za-z0-9._-]+/g;
const REFRESH_TOKEN = /(^|[^A-Za-z0-9])1\/\/[A-Za-z0-9._-]{8,}/g;
const API_KEY = /\bAIza[0-9A-Za-z_-]{20,}/g;
const CLIENT_SECRET = /\bGOCSPX-[A-Za-z0-9_-]{8,}/g;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export function redactText(text: string): string {
  return text
    .replace(SECRET_PARAM, `$1${REDACTED}`)
    .replace(BARE_PARAM, `$1${REDACTED}`)
    .replace(JSON_FIELD, `$1${REDACTED}`)
    .replace(ENV_ASSIGN, `$1${REDACTED}`)
    .replace(BEARER, `$1${REDACTED}`)
    .replace(ACCESS_TOKEN, REDACTED)
    .replace(REFRESH_TOKEN, `$1${REDACTED}`)
    .replace(API_KEY, REDACTED)
    .replace(CLIENT_SECRET, REDACTED);
}

/** Deep copy with secret-named keys replaced and secret-looking strings scrubbed. */
export function redact(value: unknown, depth = 0, text: (s: string) => string = redactText): unknown {
  if (depth > 64) return REDACTED;
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1, text));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      // A JSON-RPC error's numeric `code` (-32601) is not an OAuth code: those are strings.
      const jsonRpcCode = k === 'code' && typeof v === 'number';
      out[text(k)] =
        isSecretKey(k) && !jsonRpcCode && v !== null && typeof v !== 'object' && typeof v !== 'boolean'
          ? REDACTED
          : redact(v, depth + 1, text);
    }
    return out;
  }
  return value;
}

/** Server-derived text, safe to store or show: control characters stripped, then secrets redacted. */
export function serverText(text: string, options: { singleLine?: boolean } = {}): string {
  return redactText(sanitizeForTerminal(text, options));
}

/** serverText() applied to every string (and key) of a server-derived value. */
export function serverValue(value: unknown): unknown {
  return redact(value, 0, (s) => serverText(s));
}
