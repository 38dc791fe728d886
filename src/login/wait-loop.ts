/**
 * The skeleton both sign-in waits share (the browser redirect and
 * gemini-cli's code entry): a prompt on stdin with a live countdown, the
 * authenticate answer, the deadline, Ctrl-C, and periodic `waiting` events.
 * Whichever comes first settles the wait; every timer and the prompt are
 * gone afterwards.
 */
import { AcpError } from '../acp/acp-error.js';
import { AgyError, EXIT, InterruptedError, TimeoutError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { formatDuration } from '../util/duration.js';
import { emit } from './detached/contract.js';
import { signInFailureHint } from './failure-hints.js';
import { countdownPrompt, startPasteReader } from './paste.js';

const COUNTDOWN_EVERY_MS = 1_000;
const WAITING_EVENT_EVERY_MS = 15_000;

export function authFailure(err: AcpError, env: NodeJS.ProcessEnv = {}): AgyError {
  return new AgyError(EXIT.auth, 'auth-failed', `The server reported that the sign-in failed: ${err.message}`, {
    hint: signInFailureHint(err, env),
  });
}

export interface WaitLoop {
  readonly settled: boolean;
  finish(err?: unknown): void;
  /** A timer (interval or timeout) cleared when the wait settles. */
  keep(timer: NodeJS.Timeout): void;
}

export interface WaitLoopOptions {
  authenticate: Promise<unknown>;
  deadline: number;
  startedAt: number;
  /** Prompt text after the countdown, e.g. "paste the authorization code". */
  prompt: string;
  /** What the deadline says: "No sign-in" / "No code". */
  nothing: string;
  timeoutHint: string;
  onLine(line: string, loop: WaitLoop): void;
  /** Extra set-up (probes, output watchers); the returned function runs when the wait settles. */
  setup?(loop: WaitLoop): (() => void) | undefined;
}

export function runWaitLoop(io: CommandIO, o: WaitLoopOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timers: NodeJS.Timeout[] = [];
    const remaining = (): number => Math.max(0, o.deadline - Date.now());
    let teardown: (() => void) | undefined;
    const onAbort = (): void => loop.finish(new InterruptedError());
    const loop = {
      settled: false,
      keep: (t: NodeJS.Timeout) => void timers.push(t),
      finish(err?: unknown): void {
        if (loop.settled) return;
        loop.settled = true;
        for (const t of timers) clearInterval(t);
        io.ctx.signal.removeEventListener('abort', onAbort);
        teardown?.();
        reader.close();
        if (err) reject(err);
        else resolve();
      },
    };
    const reader = startPasteReader(
      io,
      () => countdownPrompt(o.prompt, o.deadline),
      (line) => {
        if (!loop.settled && line.trim() !== '') o.onLine(line, loop);
      },
    );
    io.ctx.signal.addEventListener('abort', onAbort, { once: true });
    o.authenticate.then(
      () => loop.finish(),
      (err: unknown) => loop.finish(err instanceof AcpError ? authFailure(err, io.ctx.env) : err),
    );
    loop.keep(
      setTimeout(
        () =>
          loop.finish(
            new TimeoutError(`${o.nothing} within ${formatDuration(o.deadline - o.startedAt)}.`, o.timeoutHint),
          ),
        remaining(),
      ),
    );
    loop.keep(setInterval(() => reader.refresh(), COUNTDOWN_EVERY_MS));
    const waitingEvent = (): void =>
      emit(io.out, {
        event: 'waiting',
        elapsedS: Math.round((Date.now() - o.startedAt) / 1000),
        remainingS: Math.round(remaining() / 1000),
      });
    waitingEvent();
    loop.keep(setInterval(waitingEvent, WAITING_EVENT_EVERY_MS));
    teardown = o.setup?.(loop);
    if (io.ctx.signal.aborted) onAbort();
  });
}
