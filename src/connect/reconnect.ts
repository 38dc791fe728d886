/**
 * When the SSH connection drops during `agyctl connect`, the remote login
 * does not end: it runs under its supervisor there (docs/login.md, "When
 * your connection drops"). connect reconnects with a bounded backoff until
 * the login's deadline, reads `login status --json`, takes a route again on
 * the new master (route.ts: the forward, or the relay when sshd forbids it),
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
import { shellQuote } from './remote-command.js';
import { chooseRoute, type RouteChoice, reportRelayRefused, routeEvents } from './route.js';

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
export function manualResume(o: ResumeOptions, port: number | undefined): string[] {
  const ssh = (options: string[], remote?: string): string =>
    [
      'ssh',
      ...o.sshOptions.flatMap((opt) => ['-o', opt]),
      ...options,
      '--',
      o.destination,
      ...(remote === undefined ? [] : [remote]),
    ]
      .map(shellQuote)
      .join(' ');
  const lines = [ssh([], `${o.remoteAgyctl} login status`)];
  if (port !== undefined)
    lines.push(
      `${ssh(['-N', '-L', `${port}:127.0.0.1:${port}`, '-o', 'ExitOnForwardFailure=yes'])}   # then sign in with the URL status shows`,
    );
  lines.push(
    `${ssh([], `${o.remoteAgyctl} login finish`)}   # without a tunnel: paste the address the browser ended on`,
  );
  lines.push(ssh([], `${o.remoteAgyctl} login status --wait`));
  return lines;
}

export async function resumeAfterDrop(
  io: CommandIO,
  o: ResumeOptions,
  lastPort: number | undefined,
): Promise<CommandResult> {
  const { out } = io;
  out.event({ event: 'connection-lost' });
  if (!out.json)
    out.warn(
      `the SSH connection to ${o.destination} dropped; the login there goes on. Reconnecting (until ${new Date(o.deadline).toISOString()})...`,
    );
  let delay = FIRST_BACKOFF_MS;
  let attempts = 0;
  let port = lastPort;
  while (Date.now() < o.deadline) {
    if (io.ctx.signal.aborted) break;
    attempts += 1;
    const master = SshMaster.start({
      destination: o.destination,
      sshOptions: o.sshOptions,
      env: io.ctx.env,
      tempRoot: tempRoot(io.ctx.env),
      interactive: false,
      onLog: (line) => out.verbose(`[ssh] ${line}`),
    });
    try {
      await master.waitReady(Math.max(1_000, Math.min(o.sshTimeoutMs, o.deadline - Date.now())), io.ctx.signal);
      const result = await resumeOn(io, o, master, attempts, (p) => (port = p));
      if (result) return result;
    } catch (err) {
      if (err instanceof InterruptedError || io.ctx.signal.aborted) break;
      if (err instanceof AgyError && err.code !== 'ssh-failed' && err.exit !== EXIT.timeout) throw err;
      out.verbose(`reconnect attempt ${attempts}: ${(err as Error).message}`);
    } finally {
      await master.close();
    }
    await pause(Math.min(delay, Math.max(0, o.deadline - Date.now())), { signal: io.ctx.signal });
    delay = Math.min(delay * 2, MAX_BACKOFF_MS);
  }
  const commands = manualResume(o, port);
  if (!out.json) {
    out.error(
      io.ctx.signal.aborted
        ? 'Interrupted while reconnecting; the remote login is still pending until its deadline.'
        : `Could not reconnect to ${o.destination} before the login's deadline.`,
    );
    out.info('To resume by hand:');
    for (const line of commands) out.info(`  ${line}`);
  }
  const details = { resume: commands };
  if (io.ctx.signal.aborted)
    throw new AgyError(EXIT.interrupted, 'interrupted', 'Interrupted while reconnecting.', {
      hint: commands.join(' ; '),
      details,
    });
  throw new AgyError(
    EXIT.server,
    'ssh-failed',
    `Could not reconnect to ${o.destination} (${attempts} attempts) before the login's deadline.`,
    { hint: `resume by hand: ${commands.join(' ; ')}`, details },
  );
}

/** One reconnected master: undefined when it dropped again (the caller retries). */
async function resumeOn(
  io: CommandIO,
  o: ResumeOptions,
  master: SshMaster,
  attempts: number,
  sawPort: (p: number) => void,
): Promise<CommandResult | undefined> {
  const { out } = io;
  const r = await master.runRemote(`${o.remoteAgyctl} login status --json`, STATUS_TIMEOUT_MS);
  if (master.hasExited || r.exitCode === 255) return undefined;
  const status = parseStatus(r.stdout);
  if (!status)
    throw new AgyError(
      EXIT.server,
      'remote-failed',
      `Reconnected, but \`${o.remoteAgyctl} login status --json\` on ${o.destination} did not answer with a status${r.message ? ` (${r.message})` : ''}.`,
      { hint: 'check that the remote agyctl supports `login status`' },
    );
  out.event({ event: 'reconnected', attempts, status: status.status ?? null });
  if (status.status !== 'pending') return finalResult(io, o, status);
  const port = Number(status.port);
  let choice: RouteChoice | undefined;
  if (Number.isInteger(port) && port > 0) {
    sawPort(port);
    choice = await chooseRoute({
      master,
      url: typeof status.url === 'string' ? status.url : '',
      port,
      deliver: (address) => finishRemotely(master, o, address),
      onRefused: (reason) => reportRelayRefused(out, reason),
    });
    routeEvents(out, choice);
    if (!out.json) {
      out.info(`Reconnected to ${o.destination}; the login there is still waiting${routeNote(choice)}.`);
      out.info(out.e.bold('Finish signing in (open the URL again if your browser lost it):'));
      out.print(shownUrl(status.url));
    }
  }
  const paste: PasteReader = startPasteReader(
    io,
    { text: () => 'paste the address your browser ended on', deadline: () => o.deadline },
    (line) => {
      if (line.trim())
        void finishRemotely(master, o, line.trim()).then((d) => {
          if (!d.ok && !out.json) out.warn(`not delivered: ${d.reason}`);
        });
    },
  );
  const onAbort = (): void => void master.runRemote(`${o.remoteAgyctl} login cancel`, STATUS_TIMEOUT_MS);
  io.ctx.signal.addEventListener('abort', onAbort, { once: true });
  // The relay stops before the last event (`verified` or the error) is written.
  const closeRelay = async (): Promise<void> => {
    const relay = choice?.relay;
    if (!relay || !choice) return;
    choice.relay = undefined;
    await relay.close();
    out.event({ event: 'relay-closed', port });
  };
  try {
    const waited = await master.runRemote(
      `${o.remoteAgyctl} login status --wait --json`,
      Math.max(0, o.deadline - Date.now()) + AFTER_DEADLINE_MS,
    );
    await closeRelay();
    if (io.ctx.signal.aborted) throw new InterruptedError();
    const final = parseStatus(waited.stdout);
    if (!final) return undefined; // the connection dropped again (or the wait was cut): reconnect
    return finalResult(io, o, final);
  } finally {
    io.ctx.signal.removeEventListener('abort', onAbort);
    paste.close();
    await closeRelay();
    if (!master.hasExited && choice?.route === 'forward') await master.cancelForward(port);
  }
}

function routeNote(c: RouteChoice): string {
  if (c.route === 'forward') return ` and 127.0.0.1:${c.port} is forwarded again`;
  if (c.route === 'relay') return `; ${c.reason}: relaying the browser's redirect from 127.0.0.1:${c.port} instead`;
  return ` (cannot forward port ${c.port}: ${c.reason})`;
}

/** A pasted or relayed address for the resumed login: `login finish` reads it on stdin (never the command line). */
async function finishRemotely(master: SshMaster, o: ResumeOptions, address: string): Promise<Delivery> {
  const f = await master.runRemote(`${o.remoteAgyctl} login finish`, STATUS_TIMEOUT_MS, `${address}\n`);
  if (f.ok) return { ok: true };
  return {
    ok: false,
    reason: serverText((f.stdout ?? '').trim(), { singleLine: true }) || f.message || 'not delivered',
  };
}

function finalResult(io: CommandIO, o: ResumeOptions, s: RemoteStatus): CommandResult {
  const data = { connect: { destination: o.destination, resumed: true, remoteStatus: s.status ?? null } };
  if (s.status === 'succeeded') {
    io.out.event({ event: 'verified', resumed: true });
    io.out.print(`Logged in on ${o.destination} (after reconnecting); a fresh server there accepted the credentials.`);
    return { exit: EXIT.ok, data };
  }
  const oc = s.outcome ?? {};
  const exit = asExitCode(Number(oc.exit));
  throw new AgyError(
    exit,
    String(oc.code ?? 'remote-failed'),
    `on ${o.destination}: ${String(oc.message ?? `the login ended with ${s.status ?? 'no status'}`)}`,
    oc.hint ? { hint: String(oc.hint) } : {},
  );
}
