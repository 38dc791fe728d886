/** Plays the user's browser and Google: follows a sign-in URL's redirect_uri with a code and the URL's state. */
import http from 'node:http';
import type { ResultPromise } from 'execa';

export const FAKE_CODE = '4/0AfJohXm-FAKE-AUTH-CODE-do-not-print';

export function redirectFor(
  signInUrl: string,
  overrides: { code?: string | null; state?: string; port?: number; path?: string } = {},
): string {
  const u = new URL(signInUrl);
  const r = new URL(u.searchParams.get('redirect_uri')!);
  if (overrides.port !== undefined) r.port = String(overrides.port);
  if (overrides.path !== undefined) r.pathname = overrides.path;
  if (overrides.code !== null) r.searchParams.set('code', overrides.code ?? FAKE_CODE);
  r.searchParams.set('state', overrides.state ?? u.searchParams.get('state')!);
  r.searchParams.set('scope', u.searchParams.get('scope') ?? '');
  return r.toString();
}

export function httpGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Resolves with the first NDJSON event of the given kind that agyctl prints, or rejects at the deadline. */
export function waitForEvent(child: ResultPromise, kind: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => {
      child.stdout!.off('data', onData);
      reject(new Error(`no ${kind} event within ${timeoutMs} ms; stdout so far: ${buffer}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString();
      for (const line of buffer.split('\n')) {
        if (!line.trim().startsWith('{')) continue;
        try {
          const ev = JSON.parse(line) as Record<string, unknown>;
          if (ev.event === kind) {
            clearTimeout(timer);
            child.stdout!.off('data', onData);
            resolve(ev);
            return;
          }
        } catch {
          /* partial line */
        }
      }
    };
    child.stdout!.on('data', onData);
  });
}
