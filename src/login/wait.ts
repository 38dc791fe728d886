/**
 * The wait for the sign-in: whichever comes first of the authenticate
 * answer, a pasted redirect (delivered once), the deadline, Ctrl-C, the
 * server's exit, or its listener disappearing.
 */
import type { AcpServer } from '../acp/server.js';
import { AgyError, EXIT } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { type AuthUrl, validatePastedRedirect } from '../profiles/auth-url.js';
import { emit } from './detached/contract.js';
import { deliverRedirect, listenerAlive } from './listener.js';
import { runWaitLoop, type WaitLoop } from './wait-loop.js';

export { authFailure } from './wait-loop.js';

/** Probe period and grace: a vanished listener is reported within 2 s (test/e2e/login-listener-watch.test.ts measures it). */
export const LIVENESS_EVERY_MS = 700;
export const LIVENESS_GRACE_MS = 900;

export interface WaitOptions {
  server: AcpServer;
  auth: AuthUrl;
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  /** How long a closed listener may go unanswered (a profile quirk); default LIVENESS_GRACE_MS. */
  listenerGraceMs?: number | undefined;
}

export function waitForSignIn(io: CommandIO, o: WaitOptions): Promise<void> {
  let delivered = false;
  let graceRunning = false;

  async function checkListener(loop: WaitLoop): Promise<void> {
    if (loop.settled || delivered || graceRunning || (await listenerAlive(o.auth.port))) return;
    // A successful callback closes the listener just before the answer arrives: allow it a moment.
    graceRunning = true;
    loop.keep(
      setTimeout(() => {
        if (!delivered)
          loop.finish(
            new AgyError(
              EXIT.server,
              'listener-gone',
              `The server's login listener on 127.0.0.1:${o.auth.port} is gone, so the browser's redirect cannot arrive.`,
              {
                hint: 'run `agyctl login` again; if it keeps happening, check the server with `agyctl probe --verbose`',
              },
            ),
          );
      }, o.listenerGraceMs ?? LIVENESS_GRACE_MS),
    );
  }

  const refuse = (reason: string): void => {
    emit(io.out, { event: 'redirect-rejected', reason });
    if (!io.out.json) io.out.warn(`not delivered: ${reason}`);
  };

  async function onPaste(line: string): Promise<void> {
    if (delivered) return refuse('a redirect was already delivered for this login; waiting for the server');
    const v = validatePastedRedirect(line, o.auth);
    if (!v.ok) return refuse(v.reason);
    delivered = true;
    try {
      const status = await deliverRedirect(v.value.deliverTo);
      emit(io.out, { event: 'redirect-delivered', status });
      io.out.verbose(`delivered the redirect to the login listener (HTTP ${status})`);
    } catch (err) {
      delivered = false;
      // The listener closes once a redirect arrives: the browser may have got there first, through the tunnel.
      refuse(
        `could not reach the login listener (${(err as Error).message}); if the browser already reached it through the tunnel, the sign-in is arriving`,
      );
    }
  }

  return runWaitLoop(io, {
    authenticate: o.authenticate,
    deadline: o.deadline,
    startedAt: o.startedAt,
    prompt: 'paste the address your browser ended on',
    nothing: 'No sign-in',
    timeoutHint: 'run `agyctl login --timeout 20m` for more time; the URL is single-use, so open the new one',
    onLine: (line) => void onPaste(line),
    setup: (loop) => {
      loop.keep(setInterval(() => void checkListener(loop), LIVENESS_EVERY_MS));
      return undefined;
    },
  });
}
