/**
 * The relay route: when the SSH server forbids forwarding, the browser's
 * redirect still reaches the remote login, through the SSH session connect
 * already holds. connect listens on the laptop's own 127.0.0.1:<port> (the
 * port Google sends the browser back to), checks each request exactly as the
 * remote login checks a paste, and hands the one that matches to `deliver`
 * (the remote login's stdin). Anything else is answered here with an error
 * page and goes nowhere. After one delivery, or when the login ends, the
 * listener closes. The request target carries the auth code: it is passed
 * on, never shown or logged.
 */
import http from 'node:http';
import { type AuthUrl, validatePastedRedirect } from '../profiles/auth-url.js';

export type Delivery = { ok: true; status?: number } | { ok: false; reason: string };

export interface CallbackRelayOptions {
  /** The sign-in URL's redirect, as the laptop validated it: port, path and state to expect. */
  auth: AuthUrl;
  /** Where the page says the redirect went (the SSH destination). */
  destination: string;
  /** Send the redirect address to the remote login; resolves with its answer (bounded by the caller). */
  deliver(address: string): Promise<Delivery>;
  /** A request answered here and not relayed (its reason never contains the code). */
  onRefused(reason: string): void;
}

/** A stuck browser connection must not keep the listener (or connect) alive. */
const REQUEST_TIMEOUT_MS = 10_000;
const CLOSE_GRACE_MS = 2_000;

export class CallbackRelay {
  private delivering = false;
  private delivered = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: http.Server,
    private readonly options: CallbackRelayOptions,
  ) {
    server.on('request', (req, res) => void this.onRequest(req, res));
  }

  /** Listen on 127.0.0.1:<port> only; an error (the port taken since it was checked) is returned, not thrown. */
  static listen(options: CallbackRelayOptions): Promise<CallbackRelay | { error: string }> {
    const server = http.createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS });
    server.keepAliveTimeout = 0;
    return new Promise((resolve) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        resolve({ error: `cannot listen on 127.0.0.1:${options.auth.port} here (${err.code ?? err.message})` }),
      );
      server.listen({ host: '127.0.0.1', port: options.auth.port, exclusive: true }, () =>
        resolve(new CallbackRelay(server, options)),
      );
    });
  }

  get port(): number {
    return this.options.auth.port;
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = req.url ?? '';
    if (req.method === 'GET' && target.split('?')[0] === '/favicon.ico') return answer(res, 404, 'Not found', '');
    const refusal = this.refusal(req);
    if (refusal) {
      this.options.onRefused(refusal);
      return answer(
        res,
        400,
        'Not relayed',
        `This request was answered by agyctl on this machine and not sent on: ${refusal}.`,
      );
    }
    this.delivering = true;
    const result = await this.options.deliver(`http://127.0.0.1:${this.port}${target}`);
    this.delivering = false;
    if (!result.ok)
      return answer(
        res,
        502,
        'Sign-in not completed',
        `The login on ${this.options.destination} did not take this address: ${result.reason}.`,
      );
    this.delivered = true;
    res.once('finish', () => void this.close());
    // Delivered once: the server's listener decides, and an error there is final for this URL.
    if (result.status !== undefined && result.status >= 400)
      return answer(
        res,
        502,
        'Sign-in not completed',
        `The server on ${this.options.destination} answered the redirect with HTTP ${result.status}. agyctl connect says why in the terminal.`,
      );
    answer(
      res,
      200,
      'Sign-in went through',
      `The sign-in reached the login on ${this.options.destination}. You can close this tab; agyctl connect finishes in the terminal.`,
    );
  }

  /** Why this request is not relayed, or undefined for the one expected callback (checked as a paste is). */
  private refusal(req: http.IncomingMessage): string | undefined {
    if (this.delivered) return 'a redirect was already relayed for this login';
    if (this.delivering) return 'another redirect is being relayed';
    if (req.method !== 'GET') return `method ${req.method ?? '?'} is not GET`;
    const host = (req.headers.host ?? '').toLowerCase();
    if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`)
      return `Host header ${JSON.stringify(host)} is not 127.0.0.1:${this.port}`;
    const target = req.url ?? '';
    if (!target.startsWith('/')) return 'the request target is not a path';
    const v = validatePastedRedirect(`http://127.0.0.1:${this.port}${target}`, this.options.auth);
    return v.ok ? undefined : v.reason;
  }

  /** Stop listening; a request being answered gets its page first (bounded). Idempotent. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.server.closeAllConnections(), CLOSE_GRACE_MS);
      this.server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      this.server.closeIdleConnections();
    });
    return this.closing;
  }
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A small self-contained page: no scripts, no external resources, never cached, no referrer. */
function answer(res: http.ServerResponse, status: number, title: string, text: string): void {
  const body = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p><p>agyctl connect</p></body></html>\n`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'",
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  res.end(body);
}
