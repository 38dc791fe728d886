/** connect --json: one NDJSON event per line on stdout, in the order things happen (docs/connect.md). */

import type { ConnectEvent } from '../../../connect/events.js';
import type { RouteChoice } from '../../../connect/redirect-route.js';
import { EXIT } from '../../../core/errors.js';
import type { Reporter } from '../../../core/io.js';
import { type ConnectPrinter, writeSharedLines } from './printer.js';

type Json = Record<string, unknown>;

export class JsonPrinter implements ConnectPrinter {
  constructor(private readonly out: Reporter) {}

  event(event: ConnectEvent, redraw?: () => void): void {
    // A fleet host's events carry its name.
    const host = event.type === 'on-host' ? event.host : undefined;
    const inner = event.type === 'on-host' ? event.event : event;
    for (const doc of jsonEvents(inner)) this.out.event(host === undefined ? doc : { ...doc, host });
    writeSharedLines(this.out, inner, redraw);
  }
}

export function jsonEvents(event: ConnectEvent): Json[] {
  switch (event.type) {
    case 'connected':
    case 'host-connected':
      return [{ event: 'connected', destination: event.destination, ms: event.ms }];
    case 'remote-event':
      return [event.raw];
    case 'url-rejected':
      return [{ event: 'url-rejected', source: 'remote', reason: event.reason }];
    case 'relay-refused':
      return [{ event: 'relay-refused', reason: event.reason }];
    case 'route':
    case 'route-again':
      return routeEvents(event.choice);
    case 'browser-opened':
      return [{ event: 'browser-opened', ok: event.ok, reason: event.reason }];
    case 'relay-closed':
      return [{ event: 'relay-closed', port: event.port }];
    case 'forward-removed':
      return [{ event: 'forward-removed', port: event.port, ok: event.ok }];
    case 'connection-lost':
      return [{ event: 'connection-lost' }];
    case 'reconnected':
      return [{ event: 'reconnected', attempts: event.attempts, status: event.status }];
    case 'resumed-logged-in':
      return [{ event: 'verified', resumed: true }];
    case 'host-checked': {
      const { status, exit, ms, liveMs, ahead, findings } = event;
      return [{ event: 'checked', status, exit, ms, liveMs, ahead, findings }];
    }
    case 'already-signed-in':
      return [{ event: 'already-signed-in', destination: event.destination }];
    case 'host-result':
      return [{ event: 'host-result', ...event.result }];
    case 'fleet-summary':
      return [
        {
          event: 'fleet-summary',
          ok: event.exit === EXIT.ok,
          exit: event.exit,
          counts: event.counts,
          hosts: event.hosts,
        },
      ];
    default:
      return [];
  }
}

/** `forward-added`, `relay-listening` or `fallback-paste`, then `route`. */
function routeEvents(c: RouteChoice): Json[] {
  const local = `127.0.0.1:${c.port}`;
  const first =
    c.route === 'forward'
      ? { event: 'forward-added', port: c.port, local }
      : c.route === 'relay'
        ? { event: 'relay-listening', port: c.port, local, reason: c.reason }
        : { event: 'fallback-paste', port: c.port, reason: c.reason };
  return [
    first,
    { event: 'route', route: c.route, port: c.port, reason: c.reason ?? null, probeMs: c.probe?.ms ?? null },
  ];
}
