/**
 * connect's output: the use cases emit ConnectEvents, and one printer turns
 * them into what the person sees, text (text-printer.ts) or NDJSON events
 * (json-printer.ts). A few lines are written in both modes: --verbose
 * details, the remote login's own stderr and warnings about what is left
 * behind; those are here.
 */

import type { ConnectEvent } from '../../../connect/events.js';
import type { Reporter } from '../../../core/io.js';

export interface ConnectPrinter {
  /** `redraw` is given while the paste prompt is showing: text goes above it, and it is drawn again after. */
  event(event: ConnectEvent, redraw?: () => void): void;
}

/** Text above the paste prompt: clear its line, write, draw it again. */
export function above(out: Reporter, redraw: (() => void) | undefined, write: () => void): void {
  if (redraw) out.clearStatus();
  write();
  redraw?.();
}

/** The lines written in text and --json mode alike; false when the event has none. */
export function writeSharedLines(out: Reporter, event: ConnectEvent, redraw?: () => void): boolean {
  switch (event.type) {
    case 'ssh-log':
      out.verbose(`[ssh${event.host === undefined ? '' : ` ${event.host}`}] ${event.line}`);
      return true;
    case 'detail':
      out.verbose(event.message);
      return true;
    case 'remote-output':
      above(out, redraw, () => out.info(out.e.dim(`remote: ${event.line}`)));
      return true;
    case 'cancel-unreached':
      out.warn('could not reach the remote agyctl to cancel it; it stops by itself at its --timeout');
      return true;
    case 'step-failed':
      out.warn(`connect: ${event.message}`);
      return true;
    case 'forward-removed':
      if (!event.ok)
        out.warn(
          `could not remove the forward of port ${event.port}: ${event.message}; it ends with the SSH connection`,
        );
      return true;
    default:
      return false;
  }
}
