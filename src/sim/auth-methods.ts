// authenticate and logout.
import { agentPlatformConfigured, apiKeyConfigured, businessConfigured } from './auth-state.js';
import { AUTH_METHODS, type AuthMethodId, isAuthMethodId } from './catalog.js';
import type { SimContext } from './context.js';
import { deleteToken, rewriteSettingsAuthType, writeToken } from './credential-files.js';
import { authFailed, invalidField, RpcError } from './errors.js';
import { startOAuthFlow } from './oauth.js';
import { requireString } from './params.js';
import type { Params } from './rpc.js';

function loginWithOAuth(ctx: SimContext, method: AuthMethodId): Promise<Record<string, never>> {
  if (ctx.oauthFlow) {
    // One loopback flow at a time; the sim refuses rather than guess which wins.
    throw new RpcError(-32000, 'Onboarding already in progress', { reason: 'onboarding_in_progress' });
  }
  // Builds that save the chosen method when the flow starts, signed in or not (what probe --sign-in must undo).
  if (ctx.config.authStartWritesSettings) rewriteSettingsAuthType(ctx.paths.settings, method);
  const flow = startOAuthFlow({
    config: ctx.config,
    env: ctx.env,
    io: {
      writeStdoutLine: (line) => ctx.rpc.writeRawLine(line),
      writeStderrLine: (line) => process.stderr.write(`${line}\n`),
      writeStderr: (text) => process.stderr.write(text),
    },
    onAuthorized: () => {
      writeToken(ctx.paths.token, ctx.config.shapes);
      if (ctx.config.authWritesSettings && method === 'oauth-personal') {
        rewriteSettingsAuthType(ctx.paths.settings, 'oauth-personal');
      }
    },
    onCrash: () => ctx.crash(),
  });
  ctx.oauthFlow = flow;
  return flow.result.then(
    () => {
      ctx.oauthFlow = undefined;
      ctx.auth = { method, source: 'authenticate', revoked: false };
      return {};
    },
    (err: unknown) => {
      ctx.oauthFlow = undefined;
      throw err;
    },
  );
}

function authenticate(ctx: SimContext, p: Params): Record<string, never> | Promise<Record<string, never>> {
  const methodId = requireString(p, 'methodId');
  if (!isAuthMethodId(methodId)) {
    throw invalidField(
      'methodId',
      `unknown authentication method '${methodId}'; expected one of: ${AUTH_METHODS.map((m) => m.id).join(', ')}`,
    );
  }
  switch (methodId) {
    case 'gemini-api-key':
      if (!apiKeyConfigured(ctx.env)) {
        throw authFailed('gemini-api-key requires the GEMINI_API_KEY environment variable in the server environment.');
      }
      ctx.auth = { method: methodId, source: 'authenticate', revoked: false };
      return {};
    case 'agent-platform':
      if (!agentPlatformConfigured(ctx.env, ctx.settings)) {
        throw authFailed(
          'agent-platform requires GOOGLE_API_KEY, or a project and location from GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION ' +
            `or gcp.project/gcp.location in ${ctx.paths.settings} with Application Default Credentials.`,
        );
      }
      ctx.auth = { method: methodId, source: 'authenticate', revoked: false };
      return {};
    case 'oauth-business':
      if (!businessConfigured(ctx.settings)) {
        throw authFailed(
          `oauth-business (Gemini Enterprise) requires gcp.project and gcp.location in ${ctx.paths.settings}.`,
        );
      }
      return loginWithOAuth(ctx, methodId);
    case 'oauth-personal':
      return loginWithOAuth(ctx, methodId);
  }
}

/** ACP `logout`: forget the stored token and the in-memory login. */
function logout(ctx: SimContext): Record<string, never> {
  deleteToken(ctx.paths.token);
  ctx.auth = undefined;
  return {};
}

export function registerAuthMethods(ctx: SimContext): void {
  ctx.rpc.on('authenticate', (p) => authenticate(ctx, p));
  ctx.rpc.on('logout', () => logout(ctx));
}
