/**
 * Google, played offline for gemini-cli's sign-in: a loopback HTTPS proxy.
 * The server under test gets HTTPS_PROXY pointing here and trusts a
 * throwaway CA (NODE_EXTRA_CA_CERTS) made with openssl for this run. Each
 * CONNECT to a known Google host is answered, TLS is terminated with a
 * certificate for that host signed by the CA, and the request is served
 * from canned answers: the OAuth token and token-info endpoints, user info,
 * and the Code Assist calls gemini-cli makes when it sets up a user. Any
 * other host is refused and recorded, so a test can see unexpected egress
 * (telemetry, update checks).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll } from 'vitest';

export const GOOGLE_HOSTS = ['oauth2.googleapis.com', 'www.googleapis.com', 'cloudcode-pa.googleapis.com'] as const;

/** Values the test can look for in outputs (they must never appear there). */
export const FAKE = {
  code: '4/0AfakeAuthCodeForAgyctlTests-xyz',
  accessToken: 'ya29.fake-access-token-for-agyctl-tests',
  refreshToken: '1//fake-refresh-token-for-agyctl-tests',
  email: 'someone@example.com',
  project: 'agyctl-test-project',
} as const;

export interface SeenRequest {
  host: string;
  method: string;
  path: string;
}

/**
 * How Code Assist answers a sign-in. `ok`: a free-tier user with a project. `unsupported-client`: a personal account
 * since 2026-06-18: no current tier, the free tier ineligible with reasonCode UNSUPPORTED_CLIENT, and onboarding
 * without a project gives none (gemini-cli then throws its IneligibleTierError with the server's reasonMessage).
 */
export type CodeAssistMode = 'ok' | 'unsupported-client';

/** Google's reasonMessage for a personal account (google-gemini/gemini-cli#28229), verbatim. */
export const UNSUPPORTED_CLIENT_MESSAGE =
  'This client is no longer supported for Gemini Code Assist for individuals. To continue using Gemini, please migrate to the Antigravity suite';

export interface FakeGoogle {
  proxyUrl: string;
  /** Switch: how Code Assist answers (set per test; `ok` unless set). */
  codeAssist: CodeAssistMode;
  caFile: string;
  /** Requests served (host, method, path), in order. */
  requests: SeenRequest[];
  /** CONNECT targets that were refused (not a Google host we play). */
  refused: string[];
  close(): Promise<void>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA and one leaf certificate per host, EC P-256 (fast to make), valid for two days. */
export function makeCertificates(
  dir: string,
  hosts: readonly string[],
): { caFile: string; contexts: Map<string, tls.SecureContext> } {
  fs.mkdirSync(dir, { recursive: true });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      '/CN=agyctl test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const contexts = new Map<string, tls.SecureContext>();
  for (const host of hosts) {
    const ext = path.join(dir, `${host}.ext`);
    fs.writeFileSync(
      ext,
      `subjectAltName=DNS:${host}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`,
    );
    openssl(['req', ...ec, '-keyout', `${host}.key`, '-out', `${host}.csr`, '-subj', `/CN=${host}`], dir);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${host}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${host}.crt`,
        '-days',
        '2',
        '-extfile',
        ext,
      ],
      dir,
    );
    contexts.set(
      host,
      tls.createSecureContext({
        key: fs.readFileSync(path.join(dir, `${host}.key`)),
        cert: fs.readFileSync(path.join(dir, `${host}.crt`)),
      }),
    );
  }
  return { caFile: path.join(dir, 'ca.crt'), contexts };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

type Answer = { status: number; body: unknown };

const tokens = (): Record<string, unknown> => ({
  access_token: FAKE.accessToken,
  refresh_token: FAKE.refreshToken,
  expires_in: 3599,
  token_type: 'Bearer',
  scope:
    'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile',
});

/** The canned answers. Unknown Code Assist methods get `{}` (gemini-cli tolerates it); anything else is a 404. */
function answer(host: string, method: string, url: URL, body: string, mode: CodeAssistMode): Answer {
  if (host === 'oauth2.googleapis.com' && url.pathname === '/token') {
    const form = new URLSearchParams(body);
    if (form.get('grant_type') === 'refresh_token')
      return { status: 200, body: { ...tokens(), refresh_token: undefined } };
    if (form.get('code') === FAKE.code) return { status: 200, body: tokens() };
    return { status: 400, body: { error: 'invalid_grant', error_description: 'Malformed auth code.' } };
  }
  if (host === 'oauth2.googleapis.com' && url.pathname === '/tokeninfo') {
    return {
      status: 200,
      body: { aud: 'test', azp: 'test', email: FAKE.email, expires_in: 3500, scope: tokens().scope },
    };
  }
  if (host === 'www.googleapis.com' && url.pathname === '/oauth2/v2/userinfo') {
    return { status: 200, body: { id: '1234567890', email: FAKE.email, verified_email: true } };
  }
  if (host === 'cloudcode-pa.googleapis.com' && method === 'POST') {
    const rpc = url.pathname.split(':').pop();
    if (mode === 'unsupported-client') {
      const refusal = unsupportedClient(rpc);
      if (refusal) return refusal;
    }
    if (rpc === 'loadCodeAssist')
      return {
        status: 200,
        body: {
          currentTier: { id: 'free-tier', name: 'Gemini Code Assist for individuals' },
          allowedTiers: [{ id: 'free-tier', isDefault: true }],
          cloudaicompanionProject: FAKE.project,
        },
      };
    if (rpc === 'onboardUser')
      return { status: 200, body: { done: true, response: { cloudaicompanionProject: { id: FAKE.project } } } };
    if (rpc === 'listExperiments') return { status: 200, body: { experimentIds: [], flags: [] } };
    if (rpc === 'retrieveUserQuota') return { status: 200, body: { buckets: [] } };
    return { status: 200, body: {} };
  }
  return {
    status: 404,
    body: { error: { code: 404, message: `fake Google does not play ${method} ${host}${url.pathname}` } },
  };
}

/** The personal-account refusal: loadCodeAssist lists the free tier as ineligible; onboarding yields no project. */
function unsupportedClient(rpc: string | undefined): Answer | undefined {
  if (rpc === 'loadCodeAssist')
    return {
      status: 200,
      body: {
        allowedTiers: [{ id: 'standard-tier', isDefault: true, userDefinedCloudaicompanionProject: true }],
        ineligibleTiers: [
          {
            reasonCode: 'UNSUPPORTED_CLIENT',
            reasonMessage: UNSUPPORTED_CLIENT_MESSAGE,
            tierId: 'free-tier',
            tierName: 'Gemini Code Assist for individuals',
          },
        ],
      },
    };
  if (rpc === 'onboardUser') return { status: 200, body: { done: true, response: {} } };
  return undefined;
}

export async function startFakeGoogle(dir: string): Promise<FakeGoogle> {
  const { caFile, contexts } = makeCertificates(dir, GOOGLE_HOSTS);
  const requests: SeenRequest[] = [];
  const refused: string[] = [];
  const sockets = new Set<net.Socket>();
  const fake = { codeAssist: 'ok' } as FakeGoogle;
  const tlsServer = https.createServer({ SNICallback: (name, cb) => cb(null, contexts.get(name)) }, (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', `https://${host}`);
    void readBody(req).then((body) => {
      requests.push({ host, method: req.method ?? 'GET', path: url.pathname });
      const a = answer(host, req.method ?? 'GET', url, body, fake.codeAssist);
      res.writeHead(a.status, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      res.end(JSON.stringify(a.body));
    });
  });
  const proxy = http.createServer((_req, res) => {
    res.writeHead(405);
    res.end('CONNECT only');
  });
  proxy.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const host = (req.url ?? '').replace(/:\d+$/, '');
    if (!contexts.has(host)) {
      refused.push(req.url ?? '');
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    tlsServer.emit('connection', socket);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as net.AddressInfo;
  Object.assign(fake, {
    proxyUrl: `http://127.0.0.1:${port}`,
    caFile,
    requests,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        tlsServer.close();
        proxy.close(() => resolve());
      }),
  });
  return fake;
}

/**
 * The fake Google for one test file: started (with its CA in a temp dir)
 * before its tests, closed and removed after them. Returns a getter, since
 * it exists only once beforeAll ran.
 */
export function useFakeGoogle(): () => FakeGoogle {
  let google: FakeGoogle | undefined;
  let caDir: string | undefined;
  beforeAll(async () => {
    caDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agyctl-fake-google-'));
    google = await startFakeGoogle(caDir);
  });
  afterAll(async () => {
    await google?.close();
    if (caDir) fs.rmSync(caDir, { recursive: true, force: true });
  });
  return () => {
    if (!google) throw new Error('the fake Google is not running (did beforeAll fail?)');
    return google;
  };
}
