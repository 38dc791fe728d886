/** How a use case turns its target (state dir, --server, profile) into a server start. */

import type { StartOptions } from '../acp/lifecycle.js';
import type { CommandIO } from '../core/io.js';
import { agyctlVersion } from '../core/version.js';
import { assertServerCanUse } from './guard.js';
import { profileOf } from './index.js';
import { resolveServerCommand } from './server-command.js';
import { quietServerEnv, signInGuard } from './sign-in-guard.js';

export const DEFAULT_INIT_TIMEOUT_MS = 60_000;

export interface ServerStartExtras {
  env?: NodeJS.ProcessEnv;
  initTimeoutMs?: number;
  /** Raw server output lines, for URL capture only (never shown: they may hold the sign-in URL's state). */
  onRawOutputLine?: StartOptions['onRawOutputLine'];
  /** login's sign-in: the server may show a sign-in URL (elsewhere that means "not logged in", see sign-in-guard). */
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
    cwd: io.ctx.cwd,
    tracer: io.tracer,
    signal: io.ctx.signal,
    initTimeoutMs: extras.initTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS,
    deadlineAt: Date.now() + (extras.initTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS),
    clientVersion: agyctlVersion(),
  };
  if (!extras.signingIn && profile.quirks.signInDuringSession) options.failOn = signInGuard(profile, io.opts.stateDir);
  // Lines arrive redacted and stripped of control characters (src/acp/server.ts).
  options.onOutputLine = (line, stream) => io.out.verbose(`[server ${stream}] ${line}`);
  options.onNote = (message) => io.out.verbose(message);
  if (extras.onRawOutputLine) options.onRawOutputLine = extras.onRawOutputLine;
  return options;
}
