/**
 * The remote login's events, for a person: short progress lines on stderr.
 * (With --json the events are passed through unchanged instead.) The URL,
 * the summary and the final error are printed by run-connect, which knows
 * the local side of the story.
 */
import type { Reporter } from '../core/reporter.js';
import type { RemoteEvent, RemoteEventOf } from './remote-login.js';

const str = (v: unknown): string => (v === undefined || v === null ? '?' : String(v));

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
      // url, waiting, verified, error: handled by run-connect; settings-changed: the remote's own warning arrives on stderr.
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
