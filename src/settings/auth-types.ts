/**
 * The server's auth types and what each needs: the one place that lists
 * them (login, check and settings all read it from here). The list and the
 * requirements come from RC01's "Authentication required" message.
 */

export const AUTH_TYPES = ['oauth-personal', 'gemini-api-key', 'oauth-business', 'agent-platform'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/** Old names the server still accepts, and what agyctl writes instead. */
export const LEGACY_AUTH_TYPES: Readonly<Record<string, AuthType>> = { 'vertex-ai': 'agent-platform' };

export interface AuthTypeInfo {
  summary: string;
  /** Needs gcp.project and gcp.location in settings.json (or, for agent-platform, an API key instead). */
  gcp: 'required' | 'or-api-key' | 'unused';
  /** Logs in through the OAuth browser flow (agyctl login). */
  oauth: boolean;
}

export const AUTH_TYPE_INFO: Readonly<Record<AuthType, AuthTypeInfo>> = {
  'oauth-personal': { summary: 'Google account login (OAuth)', gcp: 'unused', oauth: true },
  'gemini-api-key': { summary: 'Gemini Developer API key from GEMINI_API_KEY', gcp: 'unused', oauth: false },
  'oauth-business': {
    summary: 'Gemini Enterprise login (OAuth) with gcp.project and gcp.location',
    gcp: 'required',
    oauth: true,
  },
  'agent-platform': {
    summary:
      'Gemini Enterprise Agent Platform (formerly Vertex AI): GOOGLE_API_KEY, or a project and location with Application Default Credentials',
    gcp: 'or-api-key',
    oauth: false,
  },
};

export function isAuthType(value: unknown): value is AuthType {
  return typeof value === 'string' && (AUTH_TYPES as readonly string[]).includes(value);
}

/** How to name a type in a message: the name the user gave, saying which type it stands for when it is a legacy one. */
export const authTypeLabel = (type: AuthType, legacy?: string): string =>
  legacy ? `${legacy} (the old name of ${type})` : type;

/** A current or legacy name as the type it means; undefined for anything else. */
export function normalizeAuthType(value: unknown): { type: AuthType; legacy: string | undefined } | undefined {
  if (isAuthType(value)) return { type: value, legacy: undefined };
  if (typeof value === 'string' && Object.hasOwn(LEGACY_AUTH_TYPES, value))
    return { type: LEGACY_AUTH_TYPES[value]!, legacy: value };
  return undefined;
}

export interface EnvNeed {
  name: string;
  /**
   * required: the server cannot use this type without it.
   * alternative: one way to satisfy the type (e.g. GOOGLE_API_KEY instead of project+location).
   * optional: used when present (e.g. a non-default ADC file).
   */
  need: 'required' | 'alternative' | 'optional';
  /** A credential: its value is never printed or written. */
  secret: boolean;
  why: string;
}

const NEEDS: Readonly<Record<AuthType, readonly EnvNeed[]>> = {
  'oauth-personal': [],
  'gemini-api-key': [
    {
      name: 'GEMINI_API_KEY',
      need: 'required',
      secret: true,
      why: 'the Gemini Developer API key; the server reads it from its own environment',
    },
  ],
  'oauth-business': [],
  'agent-platform': [
    {
      name: 'GOOGLE_API_KEY',
      need: 'alternative',
      secret: true,
      why: 'an Agent Platform API key, instead of a project and location with ADC',
    },
    {
      name: 'GOOGLE_CLOUD_PROJECT',
      need: 'alternative',
      secret: false,
      why: 'the project, when gcp.project is not in settings.json',
    },
    {
      name: 'GOOGLE_CLOUD_LOCATION',
      need: 'alternative',
      secret: false,
      why: 'the region, when gcp.location is not in settings.json',
    },
    {
      name: 'GOOGLE_APPLICATION_CREDENTIALS',
      need: 'optional',
      secret: false,
      why: 'a service-account key file for ADC, instead of `gcloud auth application-default login`',
    },
  ],
};

/** Environment variables the server process needs for this type. */
export function neededEnv(type: AuthType): readonly EnvNeed[] {
  return NEEDS[type];
}

/** Set means present and non-empty, as the server treats it. */
export function envIsSet(env: NodeJS.ProcessEnv, name: string): boolean {
  const v = env[name];
  return typeof v === 'string' && v !== '';
}

export const AUTH_TYPE_LIST = AUTH_TYPES.join(', ');
