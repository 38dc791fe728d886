/**
 * Prove credentials the way the next restart will see them: a fresh server,
 * initialize, session/new without authenticate, session/close, stop, and
 * the probe conversation removed (unless kept on request).
 */

import { AcpError } from '../acp/acp-error.js';
import { withServer } from '../acp/lifecycle.js';
import { runProbeSession } from '../acp/probe-session.js';
import { classifyAuthError } from '../acp/protocol.js';
import { AgyError, EXIT } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { removeProbeSession } from '../profiles/cleanup.js';
import { profileOf } from '../profiles/index.js';
import { serverStartOptions } from '../profiles/server-start.js';

export interface ProofResult {
  sessionId: string;
  model: string | undefined;
  initMs: number;
  sessionMs: number;
  probeRemoved: boolean;
}

export async function proveCredentials(
  io: CommandIO,
  options: { keepProbeSession: boolean; timeoutMs: number },
): Promise<ProofResult> {
  let sessionId: string | undefined;
  try {
    const result = await withServer(
      serverStartOptions(io, { initTimeoutMs: options.timeoutMs }),
      async ({ server, initMs }) => {
        const probe = await runProbeSession(server.connection, io.ctx.env, {
          timeoutMs: options.timeoutMs,
          signal: io.ctx.signal,
        });
        sessionId = probe.sessionId;
        return { sessionId: probe.sessionId, model: probe.model, initMs, sessionMs: probe.ms, probeRemoved: false };
      },
    );
    result.probeRemoved = options.keepProbeSession
      ? false
      : removeProbeSession(profileOf(io.opts), io.opts.stateDir, result.sessionId, io.ctx.env);
    return result;
  } catch (err) {
    if (sessionId && !options.keepProbeSession)
      removeProbeSession(profileOf(io.opts), io.opts.stateDir, sessionId, io.ctx.env);
    if (err instanceof AcpError) {
      const problem = classifyAuthError(err);
      throw new AgyError(
        EXIT.auth,
        problem === 'reauth-required' ? 'reauth-required' : 'proof-failed',
        `A fresh server did not accept the new credentials (${err.message}).`,
        {
          hint:
            problem === 'not-authenticated'
              ? 'make sure settings.json names the auth type (agyctl settings set-auth oauth-personal), then run `agyctl check --live`'
              : 'run `agyctl login` again',
        },
      );
    }
    throw err;
  }
}
