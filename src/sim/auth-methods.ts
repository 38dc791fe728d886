// authenticate and logout.
import { agentPlatformConfigured, apiKeyConfigured, businessConfigured } from './auth-state.js';
import { AUTH_METHODS, type AuthMethodId, isAuthMethodId } from './catalog.js';
import type { SimContext } from './context.js';
import { deleteToken, rewriteSettingsAuthType, writeToken } from './credential-files.js';
import {
  deviceSignIn,
  type Elicitation,
  elicitation,
  onlyThroughElicitation,
  signInCancelled,
  withdrawnSignIn,
} from './elicitation.js';
import { authFailed, invalidField, RpcError } from './errors.js';
import { deliverUrl } from './launch.js';
import { type OAuthFlow, startOAuthFlow } from './oauth.js';
import { requireString } from './params.js';
import { pushSignedIn } from './protocol-v2.js';
import type { Id, Params } from './rpc.js';

/** What a good sign-in leaves: the token, and the settings rewrite of builds that do it. */
function persistLogin(ctx: SimContext, method: AuthMethodId): void {
  // agy's keyring write without D-Bus fails and says nothing: the sign-in works in this process only.
  if (!ctx.paths.tokenWriteFails) writeToken(ctx.paths.token, ctx.config.shapes);
  if (ctx.config.authWritesSettings && method === 'oauth-personal') {
    rewriteSettingsAuthType(ctx.paths.settings, 'oauth-personal');
  }
}

function loginWithOAuth(ctx: SimContext, method: AuthMethodId, requestId: Id): Promise<Record<string, never>> {
  if (ctx.oauthFlow) {
    // One loopback flow at a time; the sim refuses rather than guess which wins.
    throw new RpcError(-32000, 'Onboarding already in progress', { reason: 'onboarding_in_progress' });
  }
  const mode = ctx.config.elicitation.mode;
  if (mode === 'only' && !ctx.clientElicitsUrl) throw onlyThroughElicitation();
  const el = mode !== 'off' && ctx.clientElicitsUrl ? elicitation(ctx, requestId) : undefined;
  // Builds that save the chosen method when the flow starts, signed in or not (what probe --sign-in must undo).
  if (ctx.config.authStartWritesSettings) rewriteSettingsAuthType(ctx.paths.settings, method);
  const signedIn = (): Record<string, never> => {
    ctx.auth = { method, source: 'authenticate', revoked: false };
    pushSignedIn(ctx.rpc, ctx.config.protocol, ctx.config.elicitation.hostile);
    return {};
  };
  if (el && ctx.config.elicitation.page === 'device')
    return deviceSignIn(ctx, requestId, () => persistLogin(ctx, method)).then(signedIn);
  const io = {
    writeStdoutLine: (line: string) => ctx.rpc.writeRawLine(line),
    writeStderrLine: (line: string) => process.stderr.write(`${line}\n`),
    writeStderr: (text: string) => process.stderr.write(text),
  };
  const announce = el
    ? (url: string): void => {
        if (mode === 'also') deliverUrl(ctx.config.launch, url, ctx.env, io);
        void el.ask(url).then((answer) => {
          if (answer !== 'accept') flow.fail(signInCancelled(answer));
          else if (ctx.config.elicitation.withdraw !== 'off') withdrawLater(ctx, el, flow);
          else if (ctx.config.elicitation.completeEarly) el.complete();
        });
      }
    : undefined;
  const flow = startOAuthFlow({
    config: ctx.config,
    env: ctx.env,
    io,
    onAuthorized: () => persistLogin(ctx, method),
    onCrash: () => ctx.crash(),
    ...(announce ? { announce } : {}),
  });
  ctx.oauthFlow = flow;
  // The client gives up on this sign-in: its listener goes, and the request is answered as cancelled.
  ctx.rpc.onNotification('$/cancel_request', (p) => {
    if (p.requestId !== requestId) return;
    process.stderr.write(`agy-acp-sim: the client cancelled request ${String(requestId)}; the sign-in stops\n`);
    flow.fail(new RpcError(-32800, 'Request cancelled'));
  });
  return flow.result.then(
    () => {
      ctx.oauthFlow = undefined;
      if (el && !ctx.config.elicitation.completeEarly) el.complete();
      return signedIn();
    },
    (err: unknown) => {
      ctx.oauthFlow = undefined;
      throw err;
    },
  );
}

/** AGY_SIM_ELICITATION_WITHDRAW: the page is withdrawn, its listener closed; the sign-in then fails or is never answered. */
function withdrawLater(ctx: SimContext, el: Elicitation, flow: OAuthFlow): void {
  setTimeout(() => {
    el.withdraw();
    if (ctx.config.elicitation.withdraw === 'fail') flow.fail(withdrawnSignIn());
    else flow.dispose();
  }, ctx.config.elicitation.withdrawMs);
}

function authenticate(ctx: SimContext, p: Params, id: Id): Record<string, never> | Promise<Record<string, never>> {
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
      return loginWithOAuth(ctx, methodId, id);
    case 'oauth-personal':
      return loginWithOAuth(ctx, methodId, id);
  }
}

/** ACP `logout`: forget the stored token and the in-memory login. */
function logout(ctx: SimContext): Record<string, never> {
  deleteToken(ctx.paths.token);
  ctx.auth = undefined;
  return {};
}

export function registerAuthMethods(ctx: SimContext): void {
  ctx.rpc.on('authenticate', (p, id) => authenticate(ctx, p, id));
  ctx.rpc.on('logout', () => logout(ctx));
}
