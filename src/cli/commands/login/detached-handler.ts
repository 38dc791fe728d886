/**
 * `agyctl login status | finish | cancel`: the pending login of this state
 * dir, seen and driven from any shell (a reconnected SSH session, a script).
 */
import readline from 'node:readline';
import { AgyError, EXIT, type ExitCode, InterruptedError, usageError } from '../../../core/errors.js';
import type { CommandIO, CommandResult } from '../../../core/io.js';
import {
  cancelPending,
  deliver,
  inspect,
  type Liveness,
  outcomeError,
  STUCK_MARGIN_MS,
  waitEnded,
} from '../../../login/client.js';
import { countdownPrompt, pasteWhat } from '../../../login/paste.js';
import {
  describePending,
  type LoginState,
  recordedAccount,
  recordPaths,
  statusData,
  terminalLine,
  timeLeft,
} from '../../../login/record.js';
import { notAnAddress } from '../../../profiles/auth-url.js';
import { withDeadline } from '../../../util/deadline.js';
import type { HandlerArgs } from '../../action.js';
import { ALREADY_ARRIVED, accountText } from './printers.js';

/** A subcommand without flags of its own. */
export type NoFlags = Record<string, never>;

/** `login status`'s own flags. */
export interface LoginStatusFlags {
  wait: boolean | undefined;
}

export const statusCommand = (io: CommandIO, { options }: HandlerArgs<LoginStatusFlags>): Promise<CommandResult> =>
  loginStatus(io, { wait: options.wait === true });

/** `login finish [url]`: the one positional, a string when given (commander gives nothing else). */
export const finishCommand = (io: CommandIO, { args }: HandlerArgs<NoFlags>): Promise<CommandResult> =>
  loginFinish(io, typeof args[0] === 'string' ? args[0] : undefined);

/** A reader of stdin gives up after this even when the login has longer left. */
const STDIN_MAX_MS = 10 * 60_000;

const pathsOf = (io: CommandIO) => recordPaths(io.ctx.env, io.opts.stateDir);

/** Plain status reports (exit 0); with --wait the exit is the login's own. */
function render(io: CommandIO, seen: Exclude<Liveness, { kind: 'none' }>, wait: boolean): CommandResult {
  const { state } = seen;
  const data = { login: statusData(state, seen.kind) };
  if (seen.kind === 'pending') {
    for (const line of describePending(state)) io.out.print(line);
    if (!io.out.json)
      io.out.info(
        state.mode === 'device'
          ? 'Follow it with `agyctl login status --wait`, or stop it with `agyctl login cancel`.'
          : 'Finish it with `agyctl login finish` (the address your browser ended on), or stop it with `agyctl login cancel`.',
      );
    return { exit: EXIT.ok, data };
  }
  const o = state.outcome!;
  if (o.exit === EXIT.ok) {
    io.out.print(
      `The login for ${terminalLine(state.stateDir)} succeeded: signed in${state.method ? ` with ${terminalLine(state.method)}` : ''} and proven in a fresh server (${new Date(o.endedAt).toISOString()}).`,
    );
    const account = recordedAccount(state.account);
    if (account) io.out.print(`Signed in as ${accountText(account)}.`);
    return { exit: EXIT.ok, data };
  }
  if (data.login.status === 'cancelled') {
    io.out.print(`The login for ${terminalLine(state.stateDir)} was cancelled (${new Date(o.endedAt).toISOString()}).`);
    return { exit: wait ? (o.exit as ExitCode) : EXIT.ok, data };
  }
  io.out.print(
    `The login for ${terminalLine(state.stateDir)} ${seen.kind === 'died' ? 'was lost' : 'failed'} (exit ${o.exit}${o.code ? `, ${terminalLine(o.code)}` : ''}): ${terminalLine(o.message ?? '')}`,
  );
  if (o.hint) io.out.print(`hint: ${terminalLine(o.hint)}`);
  return { exit: wait ? (o.exit as ExitCode) : EXIT.ok, data };
}

export async function loginStatus(io: CommandIO, status: { wait: boolean }): Promise<CommandResult> {
  const paths = pathsOf(io);
  let seen = inspect(paths);
  if (seen.kind === 'none') {
    if (status.wait)
      throw new AgyError(EXIT.usage, 'no-login', `No login is recorded for ${io.opts.stateDir}.`, {
        hint: 'start one with `agyctl login --detach`',
      });
    io.out.print(`No login is recorded for ${io.opts.stateDir}.`);
    return { exit: EXIT.ok, data: { login: null } };
  }
  if (status.wait && seen.kind === 'pending') {
    if (!io.out.json) io.out.info(`Waiting for the login to end (${timeLeft(seen.state)} left to sign in)...`);
    const ended = await waitEnded(paths, Math.max(0, seen.state.endBy - Date.now()) + STUCK_MARGIN_MS, io.ctx.signal);
    if (io.ctx.signal.aborted) throw new InterruptedError();
    seen = inspect(paths);
    if (!ended && seen.kind === 'pending')
      throw new AgyError(
        EXIT.timeout,
        'timeout',
        `The login supervisor (pid ${seen.state.pid}) did not end by its own deadline.`,
        { hint: 'stop it with `agyctl login cancel`' },
      );
    if (seen.kind === 'none')
      throw new AgyError(EXIT.usage, 'no-login', `The login record for ${io.opts.stateDir} was removed while waiting.`);
  }
  return render(io, seen, status.wait);
}

async function readOneLine(io: CommandIO, state: LoginState): Promise<string> {
  const { stdin, stderr } = io.ctx;
  const tty = Boolean(stdin.isTTY);
  // Without escape sequences (NO_COLOR, TERM=dumb, --no-color) the prompt is written as it is, and the
  // terminal's own line editing reads the line.
  const rl = readline.createInterface({
    input: stdin,
    ...(tty ? { output: stderr, terminal: io.out.stderrEscapes } : { terminal: false }),
  });
  try {
    const line = new Promise<string>((resolve, reject) => {
      rl.on('line', (l) => {
        if (l.trim() !== '') resolve(l);
      });
      rl.on('close', () =>
        reject(usageError('No address given: pass it as an argument or on stdin.', NO_ADDRESS_EXAMPLE)),
      );
      if (tty) {
        rl.setPrompt(countdownPrompt(pasteWhat(state.mode === 'code-entry'), state.deadline));
        rl.prompt();
      }
    });
    return await withDeadline(line, {
      timeoutMs: Math.min(STDIN_MAX_MS, Math.max(1_000, state.deadline - Date.now())),
      signal: io.ctx.signal,
      what: 'reading the address from stdin',
    });
  } finally {
    rl.close();
  }
}

function notPending(io: CommandIO, seen: Liveness): AgyError {
  if (seen.kind === 'died') return outcomeError(seen.state.outcome!);
  const ended =
    seen.kind === 'ended'
      ? ` (the last one ended with exit ${seen.state.outcome?.exit}; see \`agyctl login status\`)`
      : '';
  return new AgyError(EXIT.usage, 'no-pending-login', `No login is pending for ${io.opts.stateDir}${ended}.`, {
    hint: 'start one with `agyctl login`',
  });
}

const NO_ADDRESS_EXAMPLE = 'agyctl login finish "http://127.0.0.1:PORT/?state=...&code=..."';

/** A loopback login needs the whole address, read as every prompt reads it (quotes stripped, a bare code or a piece named). */
function refuseNonAddress(state: LoginState, line: string): void {
  const why = state.mode === 'code-entry' ? undefined : notAnAddress(line);
  if (!why) return;
  throw usageError(
    `Not delivered: ${why}.`,
    `copy the entire address from the browser's address bar: ${NO_ADDRESS_EXAMPLE}`,
  );
}

export async function loginFinish(io: CommandIO, given: string | undefined): Promise<CommandResult> {
  if (given !== undefined && given.trim() === '')
    throw usageError('No address given (the argument is empty).', NO_ADDRESS_EXAMPLE);
  const paths = pathsOf(io);
  const seen = inspect(paths);
  if (seen.kind !== 'pending') throw notPending(io, seen);
  if (seen.state.mode === 'device')
    throw usageError(
      'This login shows a page the server follows itself (a device-code or verification page): there is nothing to paste.',
      'finish the sign-in on that page, then follow it with `agyctl login status --wait`',
    );
  const line = given ?? (await readOneLine(io, seen.state));
  refuseNonAddress(seen.state, line);
  const answer = await deliver(paths, line);
  if (!answer) {
    const now = inspect(paths);
    if (now.kind !== 'pending') throw notPending(io, now);
    throw new AgyError(
      EXIT.server,
      'login-unreachable',
      `The login supervisor (pid ${seen.state.pid}) did not answer.`,
      { hint: 'check it with `agyctl login status`' },
    );
  }
  if (answer.arrived) {
    io.out.print(ALREADY_ARRIVED);
    if (!io.out.json) io.out.info('Follow it with `agyctl login status --wait`.');
    return { exit: EXIT.ok, data: { delivered: false, alreadySignedIn: true } };
  }
  if (!answer.ok) {
    const reason = answer.reason ?? 'refused';
    throw new AgyError(EXIT.usage, 'redirect-rejected', `Not delivered: ${reason}.`, {
      hint: 'paste the whole address your browser ended on, from the newest sign-in URL (`agyctl login status` shows it)',
    });
  }
  const status = answer.status;
  if (typeof status === 'number' && status >= 400) await signInFailed(io, pathsOf(io), status);
  io.out.print(
    seen.state.mode === 'code-entry'
      ? 'Sent the code to the login.'
      : `Delivered the redirect to the login listener${typeof status === 'number' ? ` (HTTP ${status})` : ''}.`,
  );
  if (!io.out.json)
    io.out.info('The login now finishes and proves the credentials; follow it with `agyctl login status --wait`.');
  return { exit: EXIT.ok, data: { delivered: true, ...(typeof status === 'number' ? { httpStatus: status } : {}) } };
}

/** How long `login finish` waits for a login whose listener refused the redirect to record why. */
const REFUSED_OUTCOME_MS = 15_000;

/**
 * The listener answered an error (400: the server could not complete the sign-in, e.g. its disk is full):
 * the login fails. Say so, with the login's own reason when it records one in time.
 */
async function signInFailed(io: CommandIO, paths: ReturnType<typeof pathsOf>, status: number): Promise<void> {
  const ended = await waitEnded(paths, REFUSED_OUTCOME_MS, io.ctx.signal);
  if (io.ctx.signal.aborted) throw new InterruptedError();
  const outcome = ended?.outcome;
  if (outcome?.exit === EXIT.ok) return; // it signed in after all (a second delivery raced this one)
  const refused = `The login listener answered HTTP ${status} to the redirect: the sign-in failed`;
  if (!outcome)
    throw new AgyError(EXIT.auth, 'auth-failed', `${refused}.`, {
      hint: 'see why with `agyctl login status --wait`; then start again with `agyctl login --detach`',
    });
  const err = outcomeError(outcome);
  throw new AgyError(err.exit, err.code, `${refused}: ${terminalLine(err.message)}`, {
    hint: err.hint ?? 'start again with `agyctl login --detach` (the URL is single-use)',
    ...(err.details ? { details: err.details } : {}),
  });
}

export async function loginCancel(io: CommandIO): Promise<CommandResult> {
  const paths = pathsOf(io);
  const seen = inspect(paths);
  if (seen.kind === 'died') {
    io.out.print(`The pending login's supervisor (pid ${seen.state.pid}) had died; cleaned up after it.`);
    return { exit: EXIT.ok, data: { cancelled: false, died: true } };
  }
  if (seen.kind !== 'pending') {
    io.out.print(`No login is pending for ${io.opts.stateDir}.`);
    return { exit: EXIT.ok, data: { cancelled: false } };
  }
  const { forced } = await cancelPending(paths, seen.state);
  io.out.print(
    `Cancelled the login (supervisor pid ${seen.state.pid}): its server is stopped, its listener closed and its shim directory removed.`,
  );
  return { exit: EXIT.ok, data: { cancelled: true, forced } };
}
