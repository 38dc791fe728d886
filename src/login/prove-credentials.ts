/**
 * What a login leaves behind, checked the way the next restart will see it.
 * Credentials are proven with a fresh server: initialize, session/new
 * without authenticate, session/close, stop, and the probe conversation
 * removed (unless kept on request). The token file must be a regular file,
 * owned by the user, mode 0600; only its
 * metadata is read, never its content.
 */

import fs from 'node:fs';
import { AcpError } from '../acp/acp-error.js';
import { withServer } from '../acp/lifecycle.js';
import { classifyAuthError, runProbeSession } from '../acp/protocol.js';
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

export interface TokenFileReport {
  path: string;
  exists: boolean;
  regular: boolean;
  ownedByUser: boolean;
  /** Octal string as users write it, e.g. "0600". */
  mode: string | undefined;
  /** The mode before agyctl narrowed it, when it was wider than 0600. */
  fixedFrom: string | undefined;
}

const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * The mode is changed on a descriptor opened with O_NOFOLLOW, never by
 * path: a link swapped in after the lstat is not followed.
 */
export function checkAndFixTokenFile(file: string, uid = process.getuid?.()): TokenFileReport {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return { path: file, exists: false, regular: false, ownedByUser: false, mode: undefined, fixedFrom: undefined };
  }
  const owned = (u: number): boolean => uid === undefined || u === uid;
  const report: TokenFileReport = {
    path: file,
    exists: true,
    regular: st.isFile(),
    ownedByUser: owned(st.uid),
    mode: octal(st.mode),
    fixedFrom: undefined,
  };
  if (!report.regular || !report.ownedByUser) return report;
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return { ...report, regular: false }; // replaced by a link (ELOOP) or gone since the lstat
  }
  try {
    const now = fs.fstatSync(fd);
    if (!now.isFile() || now.ino !== st.ino || !owned(now.uid))
      return { ...report, regular: now.isFile() && now.ino === st.ino, ownedByUser: owned(now.uid) };
    if ((now.mode & 0o077) !== 0) {
      fs.fchmodSync(fd, 0o600);
      report.fixedFrom = report.mode;
      report.mode = '0600';
    }
  } finally {
    fs.closeSync(fd);
  }
  return report;
}
