/**
 * The login's contract between its two processes (docs/architecture.md):
 * what the starting agyctl asks the supervisor to run (request.json), and
 * how the supervisor answers `login finish`. The events a login emits are
 * in ../events.ts.
 */

import type { ServerTarget } from '../core/io.js';
import type { LoginEvent } from './events.js';
import type { TunnelTarget } from './tunnel.js';

/**
 * `agyctl login`'s options: its flags checked once (src/cli/commands/login/handler.ts), the one type
 * from the command line through request.json to runLogin.
 */
export interface LoginOptions {
  method: string | undefined;
  timeoutMs: number;
  target: TunnelTarget;
  qr: boolean;
  open: boolean;
  fakeDisplay: boolean;
  keepProbeSession: boolean;
  proofTimeoutMs: number;
  /** `login --detach`: the foreground command returns once the URL is shown. */
  detached: boolean;
  /** false when stdin cannot bring a paste (`</dev/null`, closed): the address goes to `agyctl login finish` then. */
  stdinPastes: boolean;
  /** --restart: cancel a pending login of this state dir first. */
  restart: boolean;
  /** --force: replace a credential `check` accepts without asking. */
  force: boolean;
}

/** The global options the login runs with: its server and state dir, and --trace. How it is shown is the clients' business. */
export interface RequestOptions extends ServerTarget {
  trace: string | undefined;
}

/** request.json (0600, in the record dir): the login's options and the server it runs; never the environment or a terminal's facts. */
export interface LoginRequest {
  version: 1;
  id: string;
  cwd: string;
  startedAt: number;
  /** When the sign-in wait ends (startedAt + --timeout). */
  deadline: number;
  /** The supervisor gives up by then whatever happens (the proof included). */
  hardDeadline: number;
  opts: RequestOptions;
  login: LoginOptions;
}

/** The supervisor's answer to `finish` (the answer event is kept for clients of an older version). */
export interface FinishAnswer {
  ok: boolean;
  reason?: string;
  /** The listener's HTTP status for a delivered redirect. */
  status?: number;
  /** Nothing was delivered because the sign-in had already arrived (through the tunnel, or an earlier paste). */
  arrived?: boolean;
  event?: LoginEvent;
}

/**
 * Set in a login's environment by `connect` for its remote login: once the SSH session that attached it
 * is gone and no one asks after the login for this long (a duration), the login cancels itself.
 */
export const ORPHAN_GRACE_VAR = 'AGYCTL_LOGIN_ORPHAN_GRACE';
