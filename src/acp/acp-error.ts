/** A JSON-RPC error answered by the server, rendered so a person can act on it. */
import type { JsonRpcError } from './framing.js';

interface LocError {
  loc?: unknown[];
  msg?: string;
}

export class AcpError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly method: string;
  /** The error's own short message ("Authentication required"), without data. */
  readonly serverMessage: string;

  constructor(method: string, error: JsonRpcError) {
    super(renderAcpError(method, error));
    this.name = 'AcpError';
    this.method = method;
    this.serverMessage = error.message;
    this.code = error.code;
    this.data = error.data;
  }

  /** The server's own words: message plus data.message / data.reason, for classification. */
  get serverText(): string {
    const d = this.data as { message?: unknown; reason?: unknown } | undefined;
    return [
      this.message,
      typeof d?.message === 'string' ? d.message : '',
      typeof d?.reason === 'string' ? d.reason : '',
    ].join(' ');
  }
}

/** -32602 with data.errors[].loc names the wrong or missing field: the server's own correction oracle. */
export function renderAcpError(method: string, error: JsonRpcError): string {
  const base = `${method}: ${error.message} (${error.code})`;
  const errors = (error.data as { errors?: LocError[] } | undefined)?.errors;
  if (error.code === -32602 && Array.isArray(errors) && errors.length > 0) {
    const fields = errors.map((e) => `${Array.isArray(e.loc) ? e.loc.join('.') : '?'}: ${e.msg ?? 'invalid'}`);
    return `${base}: ${fields.join('; ')}`;
  }
  const dataMessage = (error.data as { message?: unknown } | undefined)?.message;
  return typeof dataMessage === 'string' && dataMessage !== error.message ? `${base}: ${dataMessage}` : base;
}
