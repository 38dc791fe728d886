/**
 * agyctl logout, for decommissioning a box: the server's own `logout` when
 * it advertises auth.logout, else (or with --local) removing the token file.
 * Then a fresh server must refuse session/new, or the logout did not take.
 */
import fs from 'node:fs';
import { AcpError } from '../acp/acp-error.js';
import { withServer } from '../acp/lifecycle.js';
import { logout as acpLogout, classifyAuthError, runProbeSession, supportsLogout } from '../acp/protocol.js';
import type { CommandIO } from '../core/io.js';
import { removeProbeSession } from '../profiles/cleanup.js';
import { assertServerCanUse } from '../profiles/guard.js';
import { profileOf } from '../profiles/index.js';
import { serverStartOptions } from '../profiles/server-start.js';
import { fsAgyError } from '../util/fs-errors.js';
import { assertNotSymlink } from '../util/os/safe-fs.js';

/** What a logout tells a person as it goes (the command's printer shows them on stderr). */
export type LogoutStep =
  | { step: 'no-token-file'; file: string }
  | { step: 'removing-token'; file: string }
  | { step: 'server-has-no-logout' }
  | { step: 'server-logged-out'; hadToken: boolean };

/** `agyctl logout`'s options, checked (src/cli/commands/logout/handler.ts), and where its steps go. */
export interface LogoutOptions {
  /** --local: remove the token file without asking the server. */
  local: boolean;
  /** Deadline for each server start and call. */
  timeoutMs: number;
  show(step: LogoutStep): void;
}

export interface LogoutReport {
  via: 'server' | 'local';
  tokenFile: string;
  tokenRemoved: boolean;
  /** There was no token file before this run (a second logout): nothing of this box's was removed. */
  alreadyLoggedOut: boolean;
  /** True when a fresh server refused a new session (authentication is gone). */
  confirmed: boolean;
  /** What the fresh server said, when it refused. */
  serverSaid: string | undefined;
}

function removeTokenLocally(file: string, show: LogoutOptions['show']): boolean {
  if (!fs.existsSync(file)) {
    show({ step: 'no-token-file', file });
    return false;
  }
  show({ step: 'removing-token', file });
  try {
    fs.rmSync(file, { force: true });
  } catch (err) {
    // A directory (or an unwritable state dir) where the token belongs is the user's to fix, not a bug.
    throw fsAgyError(err, { roots: [{ dir: file, role: 'the token file' }] }) ?? err;
  }
  return true;
}

async function serverLogout(io: CommandIO, options: LogoutOptions, hadToken: boolean): Promise<'server' | 'local'> {
  const { timeoutMs, show } = options;
  if (options.local) return 'local';
  return withServer(serverStartOptions(io, { initTimeoutMs: timeoutMs }), async ({ server, init }) => {
    if (!supportsLogout(init)) {
      show({ step: 'server-has-no-logout' });
      return 'local';
    }
    try {
      await acpLogout(server.connection, { timeoutMs, signal: io.ctx.signal });
      show({ step: 'server-logged-out', hadToken });
      return 'server';
    } catch (err) {
      if (err instanceof AcpError && err.code === -32601) return 'local';
      throw err;
    }
  });
}

async function confirmGone(
  io: CommandIO,
  timeoutMs: number,
): Promise<{ confirmed: boolean; said: string | undefined }> {
  let sessionId: string | undefined;
  try {
    await withServer(serverStartOptions(io, { initTimeoutMs: timeoutMs }), async ({ server }) => {
      sessionId = (await runProbeSession(server.connection, io.ctx.env, { timeoutMs, signal: io.ctx.signal }))
        .sessionId;
    });
    return { confirmed: false, said: undefined };
  } catch (err) {
    if (err instanceof AcpError && classifyAuthError(err)) return { confirmed: true, said: err.serverMessage };
    throw err;
  } finally {
    if (sessionId) removeProbeSession(profileOf(io.opts), io.opts.stateDir, sessionId, io.ctx.env);
  }
}

export async function runLogout(io: CommandIO, options: LogoutOptions): Promise<LogoutReport> {
  assertServerCanUse(profileOf(io.opts), io.opts.stateDir); // before the token is touched
  const tokenFile = profileOf(io.opts).files(io.opts.stateDir).token;
  // A linked token would make the server (or --local) act on credentials outside this state dir: refuse before starting anything.
  assertNotSymlink(tokenFile, 'the token file');
  const existedBefore = fs.existsSync(tokenFile);
  const via = await serverLogout(io, options, existedBefore);
  if (via === 'local') removeTokenLocally(tokenFile, options.show);
  const { confirmed, said } = await confirmGone(io, options.timeoutMs);
  return {
    via,
    tokenFile,
    tokenRemoved: existedBefore && !fs.existsSync(tokenFile),
    alreadyLoggedOut: !existedBefore,
    confirmed,
    serverSaid: said,
  };
}
