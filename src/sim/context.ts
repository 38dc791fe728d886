// Process-wide state shared by the method handlers.
import type { AuthState, Settings } from './auth-state.js';
import type { SessionConfig } from './catalog.js';
import type { SimConfig } from './config.js';
import { authRequired, tokenRevoked } from './errors.js';
import type { OAuthFlow } from './oauth.js';
import type { StatePaths } from './paths.js';
import type { RpcConnection } from './rpc.js';
import type { ConversationDb } from './store.js';

export interface OpenSession {
  id: string;
  cwd: string;
  db: ConversationDb;
  config: SessionConfig;
  /** AGY_SIM_WRITE_INTERVAL_MS background writer. */
  fillerTimer: NodeJS.Timeout | undefined;
}

export interface SimContext {
  config: SimConfig;
  env: Record<string, string | undefined>;
  paths: StatePaths;
  /** Parsed once at startup; RC01 never rereads settings.json. */
  settings: Settings;
  rpc: RpcConnection;
  auth: AuthState | undefined;
  oauthFlow: OAuthFlow | undefined;
  /** The client advertised clientCapabilities.elicitation.url in initialize. */
  clientElicitsUrl: boolean;
  sessions: Map<string, OpenSession>;
  /** AGY_SIM_CRASH_WHILE_WAITING_MS: die like the real server reportedly does. */
  crash(): void;
}

/** The gate of every method that needs a model backend. */
export function requireAuth(ctx: SimContext): void {
  if (!ctx.auth) throw authRequired(ctx.paths.settings);
  // A revoked refresh token only shows when the server first uses it.
  if (ctx.auth.revoked && ctx.auth.source === 'token-file') throw tokenRevoked();
}
