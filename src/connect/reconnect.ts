/**
 * When the SSH connection drops during `agyctl connect`, the remote login
 * does not end: it runs under its supervisor there (docs/login.md, "When
 * your connection drops"). connect reconnects with a bounded backoff until
 * the login's deadline, reads `login status --json`, takes a route again on
 * the new master (redirect-route.ts: the forward, or the relay when sshd forbids it),
 * passes pastes and relayed redirects through `login finish` (stdin, never
 * the command line), and waits with `login status --wait --json`. When it
 * cannot get back in time it prints the exact commands to resume by hand.
 */
import { serverText, serverValue } from '../acp/redact.js';
import { AgyError, asExitCode, EXIT, InterruptedError } from '../core/errors.js';
import type { CommandIO, CommandResult } from '../core/io.js';
import { tempRoot } from '../core/paths.js';
import { type PasteReader, startPasteReader } from '../login/paste.js';
import { validateAuthUrl, validateCodeEntryUrl } from '../profiles/auth-url.js';
import { pause } from '../util/deadline.js';
import { sanitizeForTerminal } from '../util/terminal-text.js';
import type { Delivery } from './callback-relay.js';
import { SshMaster } from './control-master.js';
import type { ConnectEmit } from './events.js';
import { chooseRoute, type RouteChoice } from './redirect-route.js';
import { shellQuote } from './remote-command.js';

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;
const STATUS_TIMEOUT_MS = 30_000;
/** The remote proof runs after the sign-in deadline; status --wait may take that long past it. */
const AFTER_DEADLINE_MS = 180_000;

export interface ResumeOptions {
  destination: string;
  sshOptions: string[];
  remoteAgyctl: string;
  sshTimeoutMs: number;
  /** When the remote sign-in wait ends (from its `waiting` events), as far as we know. */
  deadline: number;
}

type RemoteStatus = Record<string, unknown> & {
  status?: string;
  port?: number;
  url?: string;
  outcome?: { exit?: number; code?: string; message?: string; hint?: string } | null;
};

/** The remote `login status --json` document: every string redacted and stripped of control characters (the URL only stripped). */
function parseStatus(stdout: string | undefined): RemoteStatus | undefined {
  let login: unknown;
  try {
    login = (JSON.parse(stdout ?? '') as { login?: unknown }).login;
  } catch {
    return undefined;
  }
  if (!login || typeof login !== 'object' || Array.isArray(login)) return undefined;
  const url = (login as { url?: unknown }).url;
  const safe = serverValue(login) as RemoteStatus;
  if (typeof url === 'string') safe.url = sanitizeForTerminal(url, { singleLine: true });
  return safe;
}

/** A resumed login's URL is shown only when it is a sign-in URL login itself would show. */
function shownUrl(url: unknown): string {
  const text = typeof url === 'string' ? url : '';
  return validateAuthUrl(text).ok || validateCodeEntryUrl(text).ok
    ? text
    : '(the remote login status gave no Google sign-in URL; not shown)';
}

/**
 * The commands a person runs to pick the login up by hand: every word quoted
 * for a POSIX shell, and `--` before the destination, as ssh gets it from us.
 */
export function manualResume(resume: ResumeOptions, port: number | undefined): string[] {
  const ssh = (options: string[], remote?: string): string =>
    [
      'ssh',
      ...resume.sshOptions.flatMap((opt) => ['-o', opt]),
      ...options,
      '--',
      resume.destination,
      ...(remote === undefined ? [] : [remote]),
    ]
      .map(shellQuote)
      .join(' ');
  const { remoteAgyctl } = resume;
  const lines = [ssh([], `${remoteAgyctl} login status`)];
  if (port !== undefined)
    lines.push(
      `${ssh(['-N', '-L', `${port}:127.0.0.1:${port}`, '-o', 'ExitOnForwardFailure=yes'])}   # then sign in with the URL status shows`,
    );
  lines.push(`${ssh([], `${remoteAgyctl} login finish`)}   # without a tunnel: paste the address the browser ended on`);
  lines.push(ssh([], `${remoteAgyctl} login status --wait`));
  return lines;
}

/** One reconnect: the resume's options, the master and its attempt, and where the events go. */
interface Attempt {
  io: CommandIO;
  resume: ResumeOptions;
  master: SshMaster;
  attempts: number;
  emit: ConnectEmit;
  /** The remote login's listener port, when status gives one (for the manual commands). */
  sawPort(port: number): void;
}

export async function resumeAfterDrop(
  io: CommandIO,
  resume: ResumeOptions,
  lastPort: number | undefined,
  emit: ConnectEmit,
): Promise<CommandResult> {
  const { signal } = io.ctx;
  emit({ type: 'connection-lost', destination: resume.destination, deadline: resume.deadline });
  let delay = FIRST_BACKOFF_MS;
  let attempts = 0;
  let port = lastPort;
  while (Date.now() < resume.deadline) {
    if (signal.aborted) break;
    attempts += 1;
    const master = SshMaster.start({
      destination: resume.destination,
      sshOptions: resume.sshOptions,
      env: io.ctx.env,
      tempRoot: tempRoot(io.ctx.env),
      interactive: false,
      onLog: (line) => emit({ type: 'ssh-log', line }),
    });
    try {
      await master.waitReady(Math.max(1_000, Math.min(resume.sshTimeoutMs, resume.deadline - Date.now())), signal);
      const result = await resumeOn({ io, resume, master, attempts, emit, sawPort: (p) => (port = p) });
      if (result) return result;
    } catch (err) {
      if (err instanceof InterruptedError || signal.aborted) break;
      if (err instanceof AgyError && err.code !== 'ssh-failed' && err.exit !== EXIT.timeout) throw err;
      emit({ type: 'detail', message: `reconnect attempt ${attempts}: ${(err as Error).message}` });
    } finally {
      await master.close();
    }
    await pause(Math.min(delay, Math.max(0, resume.deadline - Date.now())), { signal });
    delay = Math.min(delay * 2, MAX_BACKOFF_MS);
  }
  const commands = manualResume(resume, port);
  emit({ type: 'resume-by-hand', destination: resume.destination, interrupted: signal.aborted, commands });
  const details = { resume: commands };
  if (signal.aborted)
    throw new AgyError(EXIT.interrupted, 'interrupted', 'Interrupted while reconnecting.', {
      hint: commands.join(' ; '),
      details,
    });
  throw new AgyError(
    EXIT.server,
    'ssh-failed',
    `Could not reconnect to ${resume.destination} (${attempts} attempts) before the login's deadline.`,
    { hint: `resume by hand: ${commands.join(' ; ')}`, details },
  );
}

/** One reconnected master: undefined when it dropped again (the caller retries). */
async function resumeOn(attempt: Attempt): Promise<CommandResult | undefined> {
  const { io, resume, master, emit } = attempt;
  const { remoteAgyctl, destination } = resume;
  const r = await master.runRemote(`${remoteAgyctl} login status --json`, STATUS_TIMEOUT_MS);
  if (master.hasExited || r.exitCode === 255) return undefined;
  const status = parseStatus(r.stdout);
  if (!status)
    throw new AgyError(
      EXIT.server,
      'remote-failed',
      `Reconnected, but \`${remoteAgyctl} login status --json\` on ${destination} did not answer with a status${r.message ? ` (${r.message})` : ''}.`,
      { hint: 'check that the remote agyctl supports `login status`' },
    );
  emit({ type: 'reconnected', attempts: attempt.attempts, status: status.status ?? null });
  if (status.status !== 'pending') return finalResult(resume, status, emit);
  const port = Number(status.port);
  let choice: RouteChoice | undefined;
  if (Number.isInteger(port) && port > 0) {
    attempt.sawPort(port);
    choice = await chooseRoute({
      master,
      url: typeof status.url === 'string' ? status.url : '',
      port,
      deliver: (address) => finishRemotely(master, remoteAgyctl, address),
      onRefused: (reason) => emit({ type: 'relay-refused', reason: serverText(reason, { singleLine: true }) }),
    });
    emit({ type: 'route-again', choice, url: shownUrl(status.url), destination });
  }
  const paste: PasteReader = startPasteReader(
    io,
    { text: () => 'paste the address your browser ended on', deadline: () => resume.deadline },
    (line) => {
      if (line.trim())
        void finishRemotely(master, remoteAgyctl, line.trim()).then((d) => {
          if (!d.ok) emit({ type: 'paste-not-delivered', reason: d.reason });
        });
    },
  );
  const onAbort = (): void => void master.runRemote(`${remoteAgyctl} login cancel`, STATUS_TIMEOUT_MS);
  io.ctx.signal.addEventListener('abort', onAbort, { once: true });
  // The relay stops before the last event (`verified` or the error) is written.
  const closeRelay = async (): Promise<void> => {
    const relay = choice?.relay;
    if (!relay || !choice) return;
    choice.relay = undefined;
    await relay.close();
    emit({ type: 'relay-closed', port });
  };
  try {
    const waited = await master.runRemote(
      `${remoteAgyctl} login status --wait --json`,
      Math.max(0, resume.deadline - Date.now()) + AFTER_DEADLINE_MS,
    );
    await closeRelay();
    if (io.ctx.signal.aborted) throw new InterruptedError();
    const final = parseStatus(waited.stdout);
    if (!final) return undefined; // the connection dropped again (or the wait was cut): reconnect
    return finalResult(resume, final, emit);
  } finally {
    io.ctx.signal.removeEventListener('abort', onAbort);
    paste.close();
    await closeRelay();
    if (!master.hasExited && choice?.route === 'forward') await master.cancelForward(port);
  }
}

/** A pasted or relayed address for the resumed login: `login finish` reads it on stdin (never the command line). */
async function finishRemotely(master: SshMaster, remoteAgyctl: string, address: string): Promise<Delivery> {
  const f = await master.runRemote(`${remoteAgyctl} login finish`, STATUS_TIMEOUT_MS, `${address}\n`);
  if (f.ok) return { ok: true };
  return {
    ok: false,
    reason: serverText((f.stdout ?? '').trim(), { singleLine: true }) || f.message || 'not delivered',
  };
}

function finalResult(resume: ResumeOptions, s: RemoteStatus, emit: ConnectEmit): CommandResult {
  const { destination } = resume;
  const data = { connect: { destination, resumed: true, remoteStatus: s.status ?? null } };
  if (s.status === 'succeeded') {
    emit({ type: 'resumed-logged-in', destination });
    return { exit: EXIT.ok, data };
  }
  const oc = s.outcome ?? {};
  const exit = asExitCode(Number(oc.exit));
  throw new AgyError(
    exit,
    String(oc.code ?? 'remote-failed'),
    `on ${destination}: ${String(oc.message ?? `the login ended with ${s.status ?? 'no status'}`)}`,
    oc.hint ? { hint: String(oc.hint) } : {},
  );
}
