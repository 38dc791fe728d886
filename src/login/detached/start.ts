/**
 * Starting a login: every interactive `agyctl login` runs its server under
 * a supervisor and attaches to it, so a dropped session (SIGHUP) hands the
 * login over for free: the foreground process simply leaves. `--detach`
 * leaves on purpose once the URL is shown. One pending login per state dir.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT } from '../../core/errors.js';
import type { CommandIO } from '../../core/io.js';
import { holderLine, parseHolderLine, takePidLock } from '../../util/os/pid-lock.js';
import { sameProcessAlive } from '../../util/os/process.js';
import type { ShowStartStep } from '../steps.js';
import type { LoginRequest } from './contract.js';
import { cancelPending, inspect } from './pending-login.js';
import { spawnSupervisor } from './process.js';
import { describePending, ensureRecordDir, type LoginState, recordPaths, statusData } from './record.js';
import { type RelayResult, relayLogin } from './terminal-relay.js';

/** Start-up may take the server's initialize deadline before the wait begins; the proof has two steps of its own deadline. */
const STARTUP_ALLOWANCE_MS = 60_000;
const END_MARGIN_MS = 60_000;

/** What the supervisor runs: written to the 0600 request.json with the ids and deadlines added. */
export type LoginAsked = Pick<LoginRequest, 'opts' | 'login' | 'tty'>;

/** The message is one line; the URL and tunnel stand in `pending` (and, for a person, on the lines before it). */
export function pendingError(state: LoginState): AgyError {
  const [first] = describePending(state);
  return new AgyError(EXIT.usage, 'login-pending', first!, {
    hint: 'sign in with that URL (through that tunnel) and deliver the redirect with `agyctl login finish`, watch it with `agyctl login status`, stop it with `agyctl login cancel`, or start over with `agyctl login --restart`',
    details: { pending: statusData(state, 'pending') },
  });
}

export async function startLogin(io: CommandIO, asked: LoginAsked, show: ShowStartStep): Promise<RelayResult> {
  const paths = recordPaths(io.ctx.env, io.opts.stateDir);
  ensureRecordDir(paths);
  const release = claimStart(paths.dir, io.opts.stateDir);
  try {
    const seen = inspect(paths);
    if (seen.kind === 'pending') {
      if (!asked.login.restart) {
        show({ step: 'pending', state: seen.state });
        throw pendingError(seen.state);
      }
      show({ step: 'restarting', pid: seen.state.pid });
      await cancelPending(paths, seen.state);
      show({ step: 'restarted', event: { event: 'restarted', cancelled: seen.state.id } });
    } else if (seen.kind === 'died') {
      show({ step: 'previous-died', pid: seen.state.pid });
    }
    fs.rmSync(paths.state, { force: true });
    const request = makeRequest(io, asked);
    await spawnSupervisor({ paths, request, env: io.ctx.env, cwd: io.ctx.cwd });
    return await relayLogin(io, {
      paths,
      detach: asked.login.detached,
      endBy: request.hardDeadline,
      release,
      show,
    });
  } finally {
    release();
  }
}

/**
 * Two logins started at the same moment both find no record; an exclusive
 * claim file (held until the supervisor has written its state) lets only one
 * through. A claim whose agyctl is gone is stale and taken over.
 */
function claimStart(dir: string, stateDir: string): () => void {
  const claim = takePidLock(path.join(dir, 'starting'), {
    content: holderLine(),
    parse: parseHolderLine,
    alive: (h) => h.pid !== process.pid && sameProcessAlive(h.pid, h.start),
  });
  if (claim.taken) return claim.release;
  const by = claim.why === 'held' && claim.holder ? ` (pid ${claim.holder.pid})` : '';
  throw new AgyError(EXIT.usage, 'login-pending', `Another agyctl login${by} is starting for ${stateDir}.`, {
    hint: 'see it with `agyctl login status` in a moment',
  });
}

function makeRequest(io: CommandIO, asked: LoginAsked): LoginRequest {
  const startedAt = Date.now();
  const { login } = asked;
  const deadline = startedAt + login.timeoutMs;
  return {
    ...asked,
    version: 1,
    id: crypto.randomBytes(6).toString('hex'),
    cwd: io.ctx.cwd,
    startedAt,
    deadline,
    hardDeadline: deadline + STARTUP_ALLOWANCE_MS + 2 * login.proofTimeoutMs + END_MARGIN_MS,
  };
}
