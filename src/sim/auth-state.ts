// Authentication state: what the server knows at startup from settings.json
// and acp_token.json, and what authenticate/logout change in memory later.
// RC01 reads settings.json ONLY at startup; later edits have no effect on a
// running process, so the parsed Settings object is frozen here.
import { readFileSync } from 'node:fs';
import type { AuthMethodId } from './catalog.js';
import type { StatePaths } from './paths.js';

export interface Settings {
  authType: string | undefined;
  gcpProject: string | undefined;
  gcpLocation: string | undefined;
}

/** Where the current credentials came from; only 'token-file' can be revoked. */
export type AuthSource = 'token-file' | 'settings-env' | 'authenticate';

export interface AuthState {
  method: AuthMethodId;
  source: AuthSource;
  /** The stored token is revoked (AGY_SIM_TOKEN_STATE=revoked or "sim_revoked": true). */
  revoked: boolean;
}

type Env = Record<string, string | undefined>;

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A missing or unparsable settings.json behaves like an empty one. */
export function readSettings(path: string, comments = false): Settings {
  let raw: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    raw = JSON.parse(comments ? withoutComments(text) : text);
  } catch {
    raw = {};
  }
  const obj = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const auth = (obj.auth && typeof obj.auth === 'object' ? obj.auth : {}) as Record<string, unknown>;
  const gcp = (obj.gcp && typeof obj.gcp === 'object' ? obj.gcp : {}) as Record<string, unknown>;
  return { authType: str(auth.type), gcpProject: str(gcp.project), gcpLocation: str(gcp.location) };
}

/** undefined when the file is absent or not JSON (the server then ignores it); `opaque` (AGY_SIM_TOKEN_SHAPE): any non-empty file. */
export function readToken(path: string, opaque = false): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return opaque && text.length > 0 ? {} : undefined;
  }
}

export function businessConfigured(s: Settings): boolean {
  return s.gcpProject !== undefined && s.gcpLocation !== undefined;
}

export function apiKeyConfigured(env: Env): boolean {
  return str(env.GEMINI_API_KEY) !== undefined;
}

/** agent-platform: an API key, or a project+location from env or settings (ADC assumed). */
export function agentPlatformConfigured(env: Env, s: Settings): boolean {
  if (str(env.GOOGLE_API_KEY)) return true;
  const project = str(env.GOOGLE_CLOUD_PROJECT) ?? s.gcpProject;
  const location = str(env.GOOGLE_CLOUD_LOCATION) ?? s.gcpLocation;
  return project !== undefined && location !== undefined;
}

/**
 * Startup auth. The server needs settings auth.type to know which method to
 * use: a token file alone does not authenticate.
 */
export function startupAuth(
  paths: StatePaths,
  settings: Settings,
  env: Env,
  forceRevoked: boolean,
  opaqueToken = false,
): AuthState | undefined {
  switch (settings.authType) {
    case 'oauth-personal':
    case 'oauth-business': {
      if (settings.authType === 'oauth-business' && !businessConfigured(settings)) return undefined;
      const token = readToken(paths.token, opaqueToken);
      if (!token) return undefined;
      return { method: settings.authType, source: 'token-file', revoked: forceRevoked || token.sim_revoked === true };
    }
    case 'gemini-api-key':
      return apiKeyConfigured(env) ? { method: 'gemini-api-key', source: 'settings-env', revoked: false } : undefined;
    case 'agent-platform':
    case 'vertex-ai': // legacy name, still accepted by RC01
      return agentPlatformConfigured(env, settings)
        ? { method: 'agent-platform', source: 'settings-env', revoked: false }
        : undefined;
    default:
      return undefined;
  }
}

/** The text with its line and block comments (outside strings) removed (AGY_SIM_SETTINGS_COMMENTS), as gemini-cli strips them. */
export function withoutComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      i = close === -1 ? text.length : close + 2;
      out += ' ';
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** The offset just past the string that opens at `start` (or the end of the text). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return Math.min(i + 1, text.length);
}
