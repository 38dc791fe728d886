/**
 * The wait for the sign-in: whichever comes first of the authenticate
 * answer, a pasted redirect (delivered once), the deadline, Ctrl-C, the
 * server's exit, or its listener disappearing.
 */
import { AcpError } from '../acp/acp-error.js';
import type { AcpServer } from '../acp/server.js';
import { AgyError, EXIT, InterruptedError, TimeoutError } from '../errors.js';
import { formatDuration } from '../util/duration.js';
import type { CommandIO } from '../cli/context.js';
import { validatePastedRedirect, type AuthUrl } from './auth-url.js';
import { deliverRedirect, listenerAlive } from './listener.js';
import { startPasteReader } from './paste.js';

/** Probe period and grace: a vanished listener is reported within 2 s. */
const LIVENESS_EVERY_MS = 700;
const LIVENESS_GRACE_MS = 900;
const COUNTDOWN_EVERY_MS = 1_000;
const WAITING_EVENT_EVERY_MS = 15_000;

export interface WaitOptions {
  server: AcpServer;
  auth: AuthUrl;
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  /** How long a closed listener may go unanswered (a profile quirk); default LIVENESS_GRACE_MS. */
  listenerGraceMs?: number | undefined;
}

export function authFailure(err: AcpError): AgyError {
  return new AgyError(EXIT.auth, 'auth-failed', `The server reported that the sign-in failed: ${err.message}`, {
    hint: 'run `agyctl login` again for a fresh URL (the server remembers a failed attempt, so agyctl starts a new one); sign in with the newest URL only',
  });
}

export function waitForSignIn(io: CommandIO, o: WaitOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let delivered = false;
    let graceRunning = false;
    const timers: NodeJS.Timeout[] = [];
    const remaining = (): number => Math.max(0, o.deadline - Date.now());
    const reader = startPasteReader(io, () => `[${formatDuration(remaining())} left] paste the address your browser ended on> `, (line) => void onPaste(line));

    const finish = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearInterval(t);
      io.ctx.signal.removeEventListener('abort', onAbort);
      reader.close();
      if (err) reject(err);
      else resolve();
    };
    const onAbort = (): void => finish(new InterruptedError());
    io.ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (io.ctx.signal.aborted) onAbort();

    o.authenticate.then(
      () => finish(),
      (err: unknown) => finish(err instanceof AcpError ? authFailure(err) : err),
    );
    timers.push(setTimeout(() => finish(new TimeoutError(`No sign-in within ${formatDuration(o.deadline - o.startedAt)}.`, 'run `agyctl login --timeout 20m` for more time; the URL is single-use, so open the new one')), remaining()));
    timers.push(setInterval(() => reader.refresh(), COUNTDOWN_EVERY_MS));
    const waitingEvent = (): void => io.out.event({ event: 'waiting', elapsedS: Math.round((Date.now() - o.startedAt) / 1000), remainingS: Math.round(remaining() / 1000) });
    waitingEvent();
    timers.push(setInterval(waitingEvent, WAITING_EVENT_EVERY_MS));
    timers.push(setInterval(() => void checkListener(), LIVENESS_EVERY_MS));

    async function checkListener(): Promise<void> {
      if (settled || delivered || graceRunning || (await listenerAlive(o.auth.port))) return;
      // A successful callback closes the listener just before the answer arrives: allow it a moment.
      graceRunning = true;
      timers.push(setTimeout(() => {
        if (!delivered) finish(new AgyError(EXIT.server, 'listener-gone', `The server's login listener on 127.0.0.1:${o.auth.port} is gone, so the browser's redirect cannot arrive.`, { hint: 'run `agyctl login` again; if it keeps happening, check the server with `agyctl probe --verbose`' }));
      }, o.listenerGraceMs ?? LIVENESS_GRACE_MS));
    }

    async function onPaste(line: string): Promise<void> {
      if (settled || line.trim() === '') return;
      const v = validatePastedRedirect(line, o.auth);
      const refuse = (reason: string): void => {
        io.out.event({ event: 'redirect-rejected', reason });
        if (!io.out.json) io.out.warn(`not delivered: ${reason}`);
      };
      if (delivered) return refuse('a redirect was already delivered for this login; waiting for the server');
      if (!v.ok) return refuse(v.reason);
      delivered = true;
      try {
        const status = await deliverRedirect(v.value.deliverTo);
        io.out.event({ event: 'redirect-delivered', status });
        io.out.verbose(`delivered the redirect to the login listener (HTTP ${status})`);
      } catch (err) {
        delivered = false;
        refuse(`could not reach the login listener: ${(err as Error).message}`);
      }
    }
  });
}
