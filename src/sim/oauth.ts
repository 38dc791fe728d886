// The OAuth loopback flow of oauth-personal / oauth-business: a one-shot HTTP
// listener on 127.0.0.1, the Google authorization URL pointing at it, and the
// onboarding window. Mirrors RC01 (and gemini-cli where noted):
// - the first HTTP request decides: the callback path with `code` and the
//   right `state` succeeds, anything else (GET / without code, bad state,
//   ?error=access_denied, another path) fails the flow;
// - a bare TCP connect + close is not a request and changes nothing (it is the
//   only safe liveness probe);
// - the listener closes once the flow ends, whichever way.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimConfig } from './config.js';
import { OAUTH_SCOPES } from './credential-files.js';
import { ONBOARDING_FAILED, ONBOARDING_TIMED_OUT, onboardingFailed, type RpcError } from './errors.js';
import { deliverUrl, type LaunchIo } from './launch.js';

export const CLIENT_ID = '1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com';
/** AGY_SIM_HOSTILE_SIGN_IN: another app's client, asking for the user's Drive too. */
export const HOSTILE_CLIENT = {
  clientId: '999999999999-someoneelse.apps.googleusercontent.com',
  extraScope: 'https://www.googleapis.com/auth/drive',
};
const AUTH_ENDPOINT = 'https://accounts.google.com/o/oauth2/v2/auth';

/** Same parameter order and encoding as the captured RC01 URL. */
export function buildAuthUrl(
  port: number,
  callbackPath: string,
  state: string,
  codeChallenge: string,
  hostile = false,
): string {
  const scopes = hostile ? [...OAUTH_SCOPES, HOSTILE_CLIENT.extraScope] : OAUTH_SCOPES;
  const params: Array<[string, string]> = [
    ['response_type', 'code'],
    ['client_id', hostile ? HOSTILE_CLIENT.clientId : CLIENT_ID],
    ['redirect_uri', encodeURIComponent(`http://127.0.0.1:${port}${callbackPath}`)],
    ['scope', scopes.map(encodeURIComponent).join('+')],
    ['state', state],
    ['access_type', 'offline'],
    ['prompt', 'consent'],
    ['code_challenge', codeChallenge],
    ['code_challenge_method', 'S256'],
  ];
  return `${AUTH_ENDPOINT}?${params.map(([k, v]) => `${k}=${v}`).join('&')}`;
}

function page(title: string, body: string): string {
  return (
    `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>` +
    `<body><h1>${title}</h1><p>${body}</p></body></html>\n`
  );
}

const SUCCESS_PAGE = page('Authentication successful', 'You can close this window and return to your editor.');
const FAILURE_PAGE = page(
  'Authentication failed',
  'The authentication flow did not complete successfully. Please try again.',
);

export interface OAuthFlowOptions {
  config: SimConfig;
  env: Record<string, string | undefined>;
  io: LaunchIo;
  /** Persist the login (token file, settings drift). Throwing fails the flow. */
  onAuthorized: () => void;
  /** AGY_SIM_CRASH_WHILE_WAITING_MS fired: the process must die now. */
  onCrash: () => void;
  /** How the URL reaches the user; default: AGY_SIM_LAUNCH's way (deliverUrl). */
  announce?: (url: string) => void;
}

export interface OAuthFlow {
  /** Resolves on a good callback; rejects with the RC01 onboarding error otherwise. */
  result: Promise<void>;
  /** Tear down without answering (process shutdown). */
  dispose(): void;
  /** End the flow with this error (the client refused the sign-in page); no-op once settled. */
  fail(error: RpcError): void;
}

export function startOAuthFlow(opts: OAuthFlowOptions): OAuthFlow {
  const { config } = opts;
  const state = randomBytes(16).toString('hex');
  // PKCE: only the challenge leaves the process; the verifier would be sent
  // to the token endpoint by a real server.
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');

  const timers: NodeJS.Timeout[] = [];
  let settled = false;
  let resolveFn!: () => void;
  let rejectFn!: (e: RpcError) => void;
  const result = new Promise<void>((res, rej) => {
    resolveFn = res;
    rejectFn = rej;
  });

  const server = createServer({ requestTimeout: 10_000 }, (req, res) => onRequest(req, res));

  function closeListener(): void {
    server.close();
    server.closeAllConnections();
  }

  function settle(error: RpcError | undefined): void {
    if (settled) return;
    settled = true;
    for (const t of timers) clearTimeout(t);
    closeListener();
    if (error) rejectFn(error);
    else resolveFn();
  }

  function callbackOk(req: IncomingMessage): boolean {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== config.callbackPath) return false;
    if (url.searchParams.has('error')) return false;
    return (url.searchParams.get('code') ?? '') !== '' && url.searchParams.get('state') === state;
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (settled) {
      // A request that raced the close: not part of the flow.
      res.writeHead(410, { Connection: 'close' }).end();
      return;
    }
    let ok = callbackOk(req);
    if (ok) {
      try {
        opts.onAuthorized();
      } catch {
        ok = false;
      }
    }
    // Decide now so a second concurrent request cannot also count.
    const outcome = ok ? undefined : onboardingFailed(ONBOARDING_FAILED);
    settled = true;
    for (const t of timers) clearTimeout(t);
    res.writeHead(ok ? 200 : 400, { 'Content-Type': 'text/html; charset=utf-8', Connection: 'close' });
    res.end(ok ? SUCCESS_PAGE : FAILURE_PAGE, () => {
      closeListener();
      if (outcome) rejectFn(outcome);
      else resolveFn();
    });
  }

  server.on('error', (err: NodeJS.ErrnoException) => {
    settle(onboardingFailed(`Onboarding failed: could not start the callback listener (${err.code ?? err.message}).`));
  });

  server.listen(config.callbackPort, '127.0.0.1', () => {
    const port = (server.address() as AddressInfo).port;
    const url = buildAuthUrl(port, config.callbackPath, state, challenge, config.elicitation.hostile);
    timers.push(setTimeout(() => settle(onboardingFailed(ONBOARDING_TIMED_OUT)), config.onboardTimeoutMs));
    if (config.crashWhileWaitingMs !== undefined) {
      timers.push(setTimeout(() => opts.onCrash(), config.crashWhileWaitingMs));
    }
    if (config.dropListenerMs !== undefined) {
      // "Listener disappeared": the port goes dead but authenticate stays pending.
      timers.push(setTimeout(() => closeListener(), config.dropListenerMs));
    }
    if (opts.announce) opts.announce(url);
    else deliverUrl(config.launch, url, opts.env, opts.io);
  });

  return {
    result,
    dispose() {
      settled = true;
      for (const t of timers) clearTimeout(t);
      closeListener();
    },
    fail: (error) => settle(error),
  };
}
