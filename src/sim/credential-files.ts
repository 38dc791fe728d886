// Writes of the state dir made by login/logout: the fake OAuth token and the
// settings.json auth.type drift some builds show. Values written here are
// never logged anywhere (the sim must not leak the token or the code).
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AssumptionSwitches } from './config.js';

export const OAUTH_SCOPES = [
  'https://www.googleapis.com/auth/cloud-platform',
  'https://www.googleapis.com/auth/userinfo.email',
  'https://www.googleapis.com/auth/aicode',
];

type TokenSwitches = Pick<AssumptionSwitches, 'tokenShape' | 'tokenExpired'>;
const RC01_TOKEN: TokenSwitches = { tokenShape: 'rc01', tokenExpired: false };

/**
 * A token of the real file's size (~510 bytes), useless to anyone. rc01: the
 * google-auth-library fields. renamed (AGY_SIM_TOKEN_SHAPE): the same facts
 * under names agyctl does not know. opaque: bytes that are not JSON.
 */
export function fakeToken(now: number, shape: TokenSwitches = RC01_TOKEN): string {
  const access = `ya29.sim-${randomBytes(125).toString('base64url')}`;
  const refresh = `1//sim-${randomBytes(72).toString('base64url')}`;
  const expiry = now + (shape.tokenExpired ? -3600_000 : 3600_000);
  if (shape.tokenShape === 'opaque') return `SIMTOKEN1 ${access} ${refresh} ${expiry}`;
  if (shape.tokenShape === 'renamed')
    return JSON.stringify({
      credential: { bearer: access, renewWith: refresh, expiresAt: new Date(expiry).toISOString() },
      kind: 'oauth2',
    });
  const token = {
    access_token: access,
    refresh_token: refresh,
    scope: OAUTH_SCOPES.join(' '),
    token_type: 'Bearer',
    ...(shape.tokenShape === 'no-expiry' ? {} : { expiry_date: expiry }),
  };
  return JSON.stringify(token);
}

/** Temp file + fsync + rename: a reader sees the old file or the whole new one. */
export function writeFileAtomic(path: string, data: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function writeToken(path: string, shape: TokenSwitches = RC01_TOKEN): void {
  writeFileAtomic(path, fakeToken(Date.now(), shape), 0o600);
}

export function deleteToken(path: string): void {
  rmSync(path, { force: true });
}

/**
 * The reported drift: a successful oauth-personal login saves that auth type,
 * replacing whatever was selected before. Other keys are preserved.
 */
export function rewriteSettingsAuthType(path: string, authType: string): void {
  let obj: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) obj = parsed as Record<string, unknown>;
  } catch {
    // absent or broken: start from an empty object
  }
  const auth = obj.auth && typeof obj.auth === 'object' ? (obj.auth as Record<string, unknown>) : {};
  obj.auth = { ...auth, type: authType };
  writeFileAtomic(path, `${JSON.stringify(obj, null, 2)}\n`, 0o644);
}
