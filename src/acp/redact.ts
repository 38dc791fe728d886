/**
 * Redaction for traces and logs. Auth codes, OAuth state, tokens and keys
 * must never reach a file or a terminal, whatever the server sends.
 */
const SECRET_KEY = /^(code|state|code_verifier|code_challenge)$|token|secret|password|passwd|credential|api[-_]?key|apikey|^key$|[-_]key$|authorization|cookie/i;
const REDACTED = '[REDACTED]';

/** Query parameters (and fragment parameters) whose values are secrets. */
const SECRET_PARAM = /([?&#](?:code|state|code_verifier|access_token|refresh_token|id_token|token|key|api_key)=)[^&#\s"']*/gi;
/** Bearer tokens and Google token shapes that may appear in free text. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
const TOKEN_SHAPES = [/\bya29\.[A-Za-z0-9._-]+/g, /(^|[^A-Za-z0-9])1\/\/[A-Za-z0-9._-]{8,}/g, /\bAIza[0-9A-Za-z_-]{20,}/g];

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export function redactText(text: string): string {
  let out = text.replace(SECRET_PARAM, `$1${REDACTED}`).replace(BEARER, `$1${REDACTED}`);
  out = out.replace(TOKEN_SHAPES[0]!, REDACTED).replace(TOKEN_SHAPES[1]!, `$1${REDACTED}`).replace(TOKEN_SHAPES[2]!, REDACTED);
  return out;
}

/** Deep copy with secret-named keys replaced and secret-looking strings scrubbed. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 64) return REDACTED;
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = isSecretKey(k) && v !== null && typeof v !== 'object' && typeof v !== 'boolean' ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}
