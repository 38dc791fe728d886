/**
 * connect for a person: progress and warnings on stderr, the sign-in URL
 * and the result on stdout (data a script may keep), the fleet's table at
 * the end.
 */

import type { ConnectEvent, HostResult } from '../../../connect/events.js';
import type { RouteChoice } from '../../../connect/redirect-route.js';
import type { RemoteEvent, RemoteEventOf } from '../../../connect/remote-login.js';
import type { CommandIO, Reporter } from '../../../core/io.js';
import { formatDuration } from '../../../util/duration.js';
import { labelled } from '../../terminal/output.js';
import { above, type ConnectPrinter, writeSharedLines } from './printer.js';

export class TextPrinter implements ConnectPrinter {
  private readonly out: Reporter;

  constructor(private readonly io: CommandIO) {
    this.out = io.out;
  }

  event(event: ConnectEvent, redraw?: () => void): void {
    const inner = event.type === 'on-host' ? event.event : event;
    if (!writeSharedLines(this.out, inner, redraw)) this.write(inner, redraw);
  }

  private write(event: ConnectEvent, redraw: (() => void) | undefined): void {
    const { out } = this;
    switch (event.type) {
      case 'connected':
        out.info(`Connected to ${event.destination} in ${event.ms} ms; starting the login there...`);
        break;
      case 'remote-event':
        if (event.relayed)
          above(out, redraw, () =>
            out.info(`The browser's redirect was relayed to the remote login (HTTP ${String(event.raw.status)}).`),
          );
        else if (event.known) above(out, redraw, () => renderRemoteEvent(out, event.known!));
        break;
      case 'url-rejected':
        above(out, redraw, () =>
          out.warn(
            `the remote login sent a sign-in URL this machine does not trust (${event.reason}); it was not shown or opened`,
          ),
        );
        break;
      case 'relay-refused':
        above(out, redraw, () =>
          out.warn(`the relay answered a request itself and did not pass it on: ${event.reason}`),
        );
        break;
      case 'route':
        this.route(event);
        break;
      case 'device-page':
        labelled(
          this.io,
          out.e.bold('Open this page in your browser and follow it (nothing to forward or paste):'),
          event.url,
        );
        out.info(`The server on ${event.destination} learns the outcome itself; waiting for it.`);
        break;
      case 'browser-opened':
        if (!event.ok) out.warn(`could not open a browser (${event.reason}); open the URL above yourself`);
        break;
      case 'cancelling':
        out.info('Cancelling the remote login...');
        break;
      case 'logged-in':
        out.print(summaryLine(event.destination, event.verified));
        break;
      case 'cancelled':
        out.error('Interrupted: the remote login was cancelled and its server stopped.');
        break;
      case 'remote-failed':
        out.error(`on ${event.destination}: ${event.message}`, event.hint);
        break;
      default:
        this.writeResumeOrFleet(event);
    }
  }

  private writeResumeOrFleet(event: ConnectEvent): void {
    const { out } = this;
    switch (event.type) {
      case 'connection-lost':
        out.warn(
          `the SSH connection to ${event.destination} dropped; the login there goes on. Reconnecting (until ${new Date(event.deadline).toISOString()})...`,
        );
        break;
      case 'route-again':
        out.info(`Reconnected to ${event.destination}; the login there is still waiting${routeNote(event.choice)}.`);
        out.info(out.e.bold('Finish signing in (open the URL again if your browser lost it):'));
        out.print(event.url);
        break;
      case 'paste-not-delivered':
        out.warn(`not delivered: ${event.reason}`);
        break;
      case 'resume-by-hand':
        out.error(
          event.interrupted
            ? 'Interrupted while reconnecting; the remote login is still pending until its deadline.'
            : `Could not reconnect to ${event.destination} before the login's deadline.`,
        );
        out.info('To resume by hand:');
        for (const line of event.commands) out.info(`  ${line}`);
        break;
      case 'resumed-logged-in':
        out.print(
          `Logged in on ${event.destination} (after reconnecting); a fresh server there accepted the credentials.`,
        );
        break;
      case 'already-signed-in':
        out.print(
          `${event.destination} is already signed in (agyctl check --live passed there); nothing changed. Use --force to sign in again.`,
        );
        break;
      case 'host-turn':
        out.info(out.e.bold(`[${event.index + 1}/${event.total}] ${event.host}`));
        break;
      case 'host-login':
        out.info(
          event.healthy
            ? `${event.host} is healthy; logging in anyway (--force).`
            : `${event.host}: ${event.status}${event.findings.length ? ` (${event.findings.join('; ')})` : ''}; logging in.`,
        );
        break;
      case 'host-result':
        reportHost(out, event.result);
        break;
      case 'fleet-summary':
        printTable(out, event.hosts);
        break;
      default:
        break;
    }
  }

  /** The route taken and the URL to open; on the paste route, what to paste back. */
  private route({ choice, url, destination, open }: Extract<ConnectEvent, { type: 'route' }>): void {
    const { out } = this;
    const { route, reason, port } = choice;
    const local = `127.0.0.1:${port}`;
    if (route !== 'paste') {
      if (route === 'forward') out.info(`Forwarding ${local} on this machine to the login listener on ${destination}.`);
      else
        out.info(
          `${reason ? reason.charAt(0).toUpperCase() + reason.slice(1) : 'No forward'}: relaying the browser's redirect over the SSH session instead (listening on ${local} on this machine).`,
        );
      labelled(
        this.io,
        out.e.bold(
          open
            ? 'Opening the sign-in URL in your browser (copy it if nothing opens):'
            : 'Open this URL in your browser and sign in:',
        ),
        url,
      );
      return;
    }
    out.warn(`cannot forward port ${port}: ${reason}`);
    labelled(this.io, out.e.bold('Sign in with this URL anyway:'), url);
    out.info(
      `Your browser will then fail to load http://127.0.0.1:${port}/... (or show another program's page): copy that address from the address bar and paste it here.`,
    );
  }
}

function routeNote(c: RouteChoice): string {
  if (c.route === 'forward') return ` and 127.0.0.1:${c.port} is forwarded again`;
  if (c.route === 'relay') return `; ${c.reason}: relaying the browser's redirect from 127.0.0.1:${c.port} instead`;
  return ` (cannot forward port ${c.port}: ${c.reason})`;
}

const str = (v: unknown): string => (v === undefined || v === null ? '?' : String(v));

/**
 * The remote login's progress events, as short lines on stderr. The URL,
 * the summary and the final error are written from the local side's events,
 * which know the rest of the story.
 */
export function renderRemoteEvent(out: Reporter, ev: RemoteEvent): void {
  switch (ev.event) {
    case 'server-started': {
      const agent = (ev.agent ?? {}) as { version?: unknown };
      out.info(
        `Remote server started (pid ${str(ev.pid)}${agent.version ? `, ${str(agent.version)}` : ''}) in ${str(ev.ms)} ms.`,
      );
      break;
    }
    case 'url-rejected':
      // Quiet evidence (a launcher run without a URL, a docs link in the output) only matters for the timeout error.
      if (ev.loud === false) break;
      out.warn(
        `the remote server showed a URL that is not a Google sign-in URL (${str(ev.reason)}); still waiting for the real one`,
      );
      break;
    case 'no-url-yet':
      out.warn(
        `the remote server has not shown a sign-in URL after ${str(ev.afterS)}s (run the login on the box with --verbose to see its output)`,
      );
      break;
    case 'redirect-rejected':
      out.warn(`the remote login did not accept that address: ${str(ev.reason)}`);
      break;
    case 'redirect-delivered':
      out.info(`The remote login received the pasted address (HTTP ${str(ev.status)}).`);
      break;
    case 'authenticated':
      out.info(
        out.e.green(
          `Signed in (${str(ev.method)}). The remote box is checking that a fresh server accepts the credentials...`,
        ),
      );
      break;
    default:
      // url, waiting, verified, error: written from the local side's events; settings-changed: the remote's own warning arrives on stderr.
      break;
  }
}

export function summaryLine(destination: string, verified: RemoteEventOf<'verified'> | undefined): string {
  if (!verified) return `Logged in on ${destination}.`;
  const token = (verified.tokenFile ?? undefined) as { mode?: unknown } | undefined;
  const parts = [`a fresh server there accepted the credentials (start-up ${str(verified.serverStartMs)} ms)`];
  if (token?.mode) parts.push(`token file mode ${str(token.mode)}`);
  return `Logged in on ${destination}: ${parts.join('; ')}.`;
}

function reportHost(out: Reporter, r: HostResult): void {
  if (r.result === 'healthy')
    out.info(
      out.e.green(`${r.host}: already healthy (agyctl check --live passed); skipped. Use --force to log in anyway.`),
    );
  else if (r.result === 'failed' && r.error) out.error(`${r.host}: ${r.error.message}`, r.error.hint);
}

function printTable(out: Reporter, results: readonly HostResult[]): void {
  const rows = [
    ['HOST', 'RESULT', 'TIME', 'EXIT', ''],
    ...results.map((r) => [
      r.host,
      r.result,
      r.result === 'not-run' ? '-' : formatDuration(r.ms),
      String(r.exit),
      r.result === 'failed' ? (r.error?.message.split('\n')[0] ?? '') : '',
    ]),
  ];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((row) => row[c]!.length)));
  out.print('');
  for (const row of rows)
    out.print(
      row
        .map((cell, c) => (c < 4 ? cell.padEnd(widths[c]!) : cell))
        .join('  ')
        .trimEnd(),
    );
}
