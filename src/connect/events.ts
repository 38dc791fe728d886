/**
 * What `agyctl connect` tells the person running it, as typed events: the
 * use cases (host-session, reconnect, fleet-connect) emit them and never
 * print; src/cli/commands/connect/ renders them as text or as NDJSON.
 */

import type { RouteChoice } from './redirect-route.js';
import type { RawEvent, RemoteEvent, RemoteEventOf } from './remote-login.js';

export type HostOutcome = 'logged-in' | 'healthy' | 'failed' | 'interrupted' | 'not-run';

/** One host's line of a fleet run (the table, the `host-result` event and the --json document). */
export interface HostResult {
  host: string;
  destination: string;
  result: HostOutcome;
  exit: number;
  ms: number;
  /** The remote check's status before the login, when it ran. */
  checkStatus: string | null;
  error: { code: string; message: string; hint?: string } | null;
}

export type ConnectEvent =
  /** A line of ssh's own log (`[ssh] ...`, `[ssh <host>] ...` in a fleet), for --verbose. */
  | { type: 'ssh-log'; line: string; host?: string }
  /** A detail for --verbose (the remote command, a failed reconnect attempt). */
  | { type: 'detail'; message: string }
  | { type: 'connected'; destination: string; ms: number }
  /** A line the remote login wrote on its stderr. */
  | { type: 'remote-output'; line: string }
  /** An event of the remote login, passed through; `relayed` when it answers a redirect the relay passed on. */
  | { type: 'remote-event'; raw: RawEvent; known: RemoteEvent | undefined; relayed: boolean }
  | { type: 'url-rejected'; reason: string }
  /** The relay answered a request itself (the reason is already made safe to show). */
  | { type: 'relay-refused'; reason: string }
  /** The route of the browser's redirect, with the sign-in URL to open. */
  | { type: 'route'; choice: RouteChoice; url: string; destination: string; open: boolean }
  /** A device-code or verification page: nothing to forward or paste. */
  | { type: 'device-page'; url: string; destination: string }
  | { type: 'browser-opened'; ok: boolean; reason?: string | undefined }
  | { type: 'relay-closed'; port: number | undefined }
  | { type: 'forward-removed'; port: number; ok: boolean; message: string }
  | { type: 'cancelling' }
  /** The remote agyctl could not be told to cancel; it stops at its own --timeout. */
  | { type: 'cancel-unreached' }
  /** A step of the session failed without ending it (e.g. opening the route). */
  | { type: 'step-failed'; message: string }
  | { type: 'logged-in'; destination: string; verified: RemoteEventOf<'verified'> | undefined }
  /** Ctrl-C: the remote login was cancelled and its server stopped. */
  | { type: 'cancelled' }
  /** The remote login reported its own error (already passed through as its `error` event). */
  | { type: 'remote-failed'; destination: string; message: string; hint: string | undefined }
  | { type: 'connection-lost'; destination: string; deadline: number }
  | { type: 'reconnected'; attempts: number; status: string | null }
  /** The route taken again after a reconnect; `url` is what may be shown. */
  | { type: 'route-again'; choice: RouteChoice; url: string; destination: string }
  | { type: 'paste-not-delivered'; reason: string }
  /** Reconnecting failed (or was interrupted): the commands to resume by hand. */
  | { type: 'resume-by-hand'; destination: string; interrupted: boolean; commands: string[] }
  | { type: 'resumed-logged-in'; destination: string }
  /** One host: `agyctl check --live` passed there, so nothing was changed (--force signs in anyway). */
  | { type: 'already-signed-in'; destination: string }
  /** Fleet: the next host's turn. */
  | { type: 'host-turn'; index: number; total: number; host: string }
  | { type: 'host-connected'; destination: string; ms: number | undefined }
  | {
      type: 'host-checked';
      status: string | null;
      exit: number | null;
      ms: number;
      liveMs: number | null;
      ahead: boolean;
      findings: string[];
    }
  /** The host is logged in although healthy (--force), or because its check failed. */
  | { type: 'host-login'; host: string; healthy: boolean; status: string | undefined; findings: string[] }
  | { type: 'host-result'; result: HostResult }
  | { type: 'fleet-summary'; exit: number; counts: Record<HostOutcome, number>; hosts: HostResult[] }
  /** An event of one host in a fleet run (its NDJSON events carry `host`). */
  | { type: 'on-host'; host: string; event: ConnectEvent };

/**
 * Where the use cases send their events. `redraw` is given while the paste
 * prompt is showing on a terminal: the printer clears the prompt line before
 * its text and calls redraw after it.
 */
export type ConnectEmit = (event: ConnectEvent, redraw?: () => void) => void;
