/**
 * How a use case turns its target (state dir, --server, profile) into a
 * server start: the command (--server as given, else the profile's program
 * names on PATH; src/acp/resolve.ts does the work), the environment, and
 * the sign-in guard.
 *
 * The guard: gemini-cli answers session/new without usable credentials by
 * starting an interactive sign-in (a browser, or a URL on stdout and a code
 * read from stdin) and waits minutes for it. Outside `login` that is never
 * wanted: the first sign-in URL in the server's output fails the call at
 * once, as "not logged in", or "re-authentication required" when stored
 * credentials exist (they were refused: expired or revoked).
 */

import fs from 'node:fs';
import { AcpError } from '../acp/acp-error.js';
import type { StartOptions } from '../acp/lifecycle.js';
import { resolveCommand, type ServerCommand } from '../acp/resolve.js';
import type { CommandIO } from '../core/io.js';
import { agyctlVersion } from '../core/runtime.js';
import { enterableCwd } from '../util/os/tree-owner.js';
import { antigravity } from './antigravity.js';
import { findUrls, looksLikeSignInUrl } from './auth-url.js';
import { assertServerCanUse } from './guard.js';
import { profileOf } from './index.js';
import { findInstalledServer } from './installed-server.js';
import type { ServerProfile } from './types.js';

export const DEFAULT_INIT_TIMEOUT_MS = 60_000;

export interface ServerStartExtras {
  env?: NodeJS.ProcessEnv;
  initTimeoutMs?: number;
  /** Raw server output lines, for URL capture only (never shown: they may hold the sign-in URL's state). */
  onRawOutputLine?: StartOptions['onRawOutputLine'];
  /** login's sign-in: the server may show a sign-in URL (elsewhere that means "not logged in", see signInGuard below). */
  signingIn?: boolean;
}

export function serverStartOptions(io: CommandIO, extras: ServerStartExtras = {}): StartOptions {
  const profile = profileOf(io.opts);
  const env = extras.signingIn ? (extras.env ?? io.ctx.env) : quietServerEnv(profile, extras.env ?? io.ctx.env);
  // Commands check this up front too (before touching anything); this is the last line of defence.
  assertServerCanUse(profile, io.opts.stateDir);
  const options: StartOptions = {
    command: resolveServerCommand(io.opts.server, env, io.ctx.cwd, profile),
    env,
    serverEnv: profile.serverEnv,
    stateDir: io.opts.stateDir,
    // Relative paths go by the caller's cwd; the server runs where it can enter (the owner's child may not enter root's).
    cwd: enterableCwd(io.ctx.cwd),
    tracer: io.tracer,
    signal: io.ctx.signal,
    initTimeoutMs: extras.initTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS,
    deadlineAt: Date.now() + (extras.initTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS),
    clientVersion: agyctlVersion(),
  };
  if (!extras.signingIn && profile.quirks.signInDuringSession) options.failOn = signInGuard(profile, io.opts.stateDir);
  // Lines arrive redacted and stripped of control characters (src/acp/server.ts).
  options.onOutputLine = (line, stream) => io.out.server({ about: 'output', stream, line });
  options.onNote = (text) => io.out.server({ about: 'protocol', text });
  if (extras.onRawOutputLine) options.onRawOutputLine = extras.onRawOutputLine;
  return options;
}

export function resolveServerCommand(
  commandLine: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  profile: ServerProfile = antigravity,
): ServerCommand {
  const installed = commandLine?.trim() ? undefined : installedServerCommand(profile, env);
  return installed ?? resolveCommand(commandLine, env, cwd, profile);
}

/** Without --server: the caller's current install, then the system one (`agyctl server install`), before PATH. */
function installedServerCommand(profile: ServerProfile, env: NodeJS.ProcessEnv): ServerCommand | undefined {
  if (!profile.installedName) return undefined;
  const found = findInstalledServer(profile.installedName, env);
  if (!found) return undefined;
  return { file: found.file, args: found.args, display: [found.file, ...found.args].join(' ') };
}

export function signInGuard(profile: ServerProfile, stateDir: string): (line: string) => Error | undefined {
  return (line) => {
    if (!findUrls(line).some(looksLikeSignInUrl)) return undefined;
    const token = profile.files(stateDir).token;
    const message = fs.existsSync(token)
      ? `Authentication required: the stored credentials (${token}) were not accepted (expired, revoked, or Google could not be reached), so the server started an interactive sign-in; re-authentication required`
      : 'Authentication required: the server has no stored credentials and started an interactive sign-in';
    return new AcpError('session', { code: -32000, message });
  };
}

/** Outside login, never let the server open a browser on a desktop: NO_BROWSER makes it print the URL instead, which the guard sees. */
export function quietServerEnv(profile: ServerProfile, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return profile.quirks.signInDuringSession ? { ...env, NO_BROWSER: 'true' } : env;
}
