/**
 * Exact-value redaction for secrets agyctl itself handles during a login
 * (a pasted authorization code): gemini-cli's line reader echoes what it
 * reads back onto stdout, and that echo must reach no terminal or trace.
 * Pattern-based redaction (src/acp/redact.ts) still applies on top.
 */
import type { Tracer } from '../core/trace.js';

const REDACTED = '[REDACTED]';

export class Secrets {
  private readonly values = new Set<string>();

  add(value: string): void {
    if (value.length >= 4) this.values.add(value);
  }

  scrub(text: string): string {
    let out = text;
    for (const v of this.values) out = out.split(v).join(REDACTED);
    return out;
  }
}

export function scrubbingTracer(inner: Tracer, secrets: Secrets): Tracer {
  return {
    record: (direction, payload) =>
      inner.record(direction, typeof payload === 'string' ? secrets.scrub(payload) : payload),
    close: () => inner.close(),
  };
}
