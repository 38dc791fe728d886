// JSON-RPC error values with the exact shapes RC01 puts on the wire.
// Handlers throw RpcError; the dispatcher turns it into an error response.

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** RC01 validates params pydantic-style: -32602 with the field location. */
export function missingField(field: string): RpcError {
  return new RpcError(-32602, 'Invalid params', {
    errors: [{ loc: [field], msg: 'field required', type: 'value_error.missing' }],
  });
}

/** Same family as missingField, for a present but unacceptable value. */
export function invalidField(field: string, msg: string): RpcError {
  return new RpcError(-32602, 'Invalid params', {
    errors: [{ loc: [field], msg, type: 'value_error' }],
  });
}

export function methodNotFound(method: string): RpcError {
  return new RpcError(-32601, 'Method not found', { method });
}

export function sessionNotFound(sessionId: string): RpcError {
  return new RpcError(-32000, 'Session not found', { message: `Session not found: ${sessionId}` });
}

/** Both OAuth failure messages RC01 was seen to send. */
export const ONBOARDING_FAILED = 'Onboarding failed: The authentication flow did not complete successfully.';
export const ONBOARDING_TIMED_OUT = 'Onboarding failed: Timed out waiting for the authentication flow to complete.';

export function onboardingFailed(message: string): RpcError {
  return new RpcError(-32000, message, { reason: 'onboarding_failed' });
}

/** A method-specific auth failure (API key missing, business project missing, ...). */
export function authFailed(message: string): RpcError {
  return new RpcError(-32000, 'Authentication failed', { message });
}

export function authRequired(settingsPath: string): RpcError {
  return new RpcError(-32000, 'Authentication required', {
    message:
      'No authentication method selected. Either call the `authenticate` method (supports oauth-personal, gemini-api-key, agent-platform), ' +
      `or set \`auth.type\` in settings.json (${settingsPath}) to one of: oauth-personal, gemini-api-key (requires GEMINI_API_KEY env var), ` +
      'oauth-business (Gemini Enterprise; requires gcp.project/location), ' +
      "agent-platform (formerly 'vertex-ai', still accepted; requires GOOGLE_API_KEY, or a project and location from " +
      'GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION or gcp.project/gcp.location with Application Default Credentials).',
  });
}

export function tokenRevoked(): RpcError {
  return authFailed(
    'Token refresh failed: invalid_grant (Token has been expired or revoked.). Re-authentication required.',
  );
}
