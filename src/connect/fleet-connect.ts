/**
 * `agyctl connect` for many hosts, one after the other: per host, connect,
 * run `agyctl check --live` there (a healthy host is skipped unless
 * --force), then the one-host login flow over the same SSH connection. A
 * failing host never stops the others; Ctrl-C cancels the current host's
 * remote check or login, closes its connection and ends the run. At the end
 * a table (or, with --json, one `host-result` event per host and a
 * `fleet-summary`), and the exit code of the worst host.
 */
import { AgyError, asExitCode, EXIT, type ExitCode, toAgyError } from '../core/errors.js';
import type { CommandIO, CommandResult } from '../core/io.js';
import { tempRoot } from '../core/paths.js';
import { type ConnectOptions, sshOptionsFor } from './connect-options.js';
import { SshMaster } from './control-master.js';
import type { ConnectEmit, HostOutcome, HostResult } from './events.js';
import { connectOver, INSTALL_ON_THE_BOX } from './host-session.js';
import type { ConnectTarget } from './inventory.js';
import { type RemoteCheck, runRemoteCheck } from './remote-check.js';

/** A fleet run: where it runs, its options (the hosts in them) and where its events go. */
export interface FleetRun {
  io: CommandIO;
  options: ConnectOptions;
  emit: ConnectEmit;
}

export async function runFleetConnect(run: FleetRun): Promise<CommandResult> {
  const { io, emit } = run;
  const { targets } = run.options;
  const results: HostResult[] = [];
  // While a person signs in on one host, the next host is connected and checked (in BatchMode on a
  // terminal, so two ssh processes never prompt at once; a host that needs a prompt is redone in turn).
  let next: Promise<Prepared> | undefined;
  try {
    for (const [i, target] of targets.entries()) {
      if (io.ctx.signal.aborted) {
        if (next) await release(next);
        next = undefined;
        results.push(notRun(target));
        continue;
      }
      const current = next ?? prepare(run, target, false);
      next = undefined;
      emit({ type: 'host-turn', index: i, total: targets.length, host: target.name });
      const turnAt = Date.now();
      let prepared = await current;
      if (prepared.error !== undefined && prepared.background && !io.ctx.signal.aborted) {
        await prepared.master.close();
        prepared = await prepare(run, target, false);
      }
      const following = targets[i + 1];
      if (following && !io.ctx.signal.aborted) next = prepare(run, following, true);
      const result = await finish(run, prepared, turnAt);
      results.push(result);
      emit({ type: 'host-result', result });
    }
  } finally {
    if (next) await release(next);
  }
  const exit = worstExit(results);
  const counts = countBy(results);
  emit({ type: 'fleet-summary', exit, counts, hosts: results });
  return { exit, data: { fleet: { hosts: results, counts } } };
}

interface Prepared {
  target: ConnectTarget;
  master: SshMaster;
  /** Started ahead of its turn, without a terminal. */
  background: boolean;
  connectMs?: number;
  check?: RemoteCheck;
  error?: unknown;
}

/** Connect to a host and run `agyctl check --live` there; never throws (the error is kept for the host's turn). */
async function prepare(run: FleetRun, target: ConnectTarget, ahead: boolean): Promise<Prepared> {
  const { io, options } = run;
  const background = ahead && Boolean(io.ctx.stdin.isTTY);
  const master = SshMaster.start({
    destination: target.destination,
    sshOptions: [...(background ? ['BatchMode=yes'] : []), ...sshOptionsFor(options, target)],
    env: io.ctx.env,
    tempRoot: tempRoot(io.ctx.env),
    interactive: !background && Boolean(io.ctx.stdin.isTTY),
    onLog: (line) => run.emit({ type: 'ssh-log', line, host: target.name }),
  });
  const prepared: Prepared = { target, master, background };
  try {
    prepared.connectMs = await master.waitReady(options.sshTimeoutMs, io.ctx.signal);
    prepared.check = await runRemoteCheck(master, options.remoteAgyctl, io.ctx.signal);
  } catch (err) {
    prepared.error = err;
  }
  return prepared;
}

async function release(pending: Promise<Prepared>): Promise<void> {
  await (await pending).master.close();
}

async function finish(run: FleetRun, p: Prepared, turnAt: number): Promise<HostResult> {
  const { io, options, emit } = run;
  const { target, master } = p;
  const hostEmit: ConnectEmit = (event, redraw) => emit({ type: 'on-host', host: target.name, event }, redraw);
  const base = { host: target.name, destination: target.destination };
  const took = (): number => Date.now() - turnAt;
  let checkStatus: string | null = null;
  try {
    if (p.error !== undefined) throw p.error;
    const check = p.check!;
    hostEmit({ type: 'host-connected', destination: target.destination, ms: p.connectMs });
    checkStatus = check.status ?? null;
    hostEmit({
      type: 'host-checked',
      status: check.status ?? null,
      exit: check.exit,
      ms: check.ms,
      liveMs: check.liveMs,
      ahead: p.background || turnAt > check.startedAt,
      findings: check.findings,
    });
    if (check.interrupted || io.ctx.signal.aborted)
      return {
        ...base,
        result: 'interrupted',
        exit: EXIT.interrupted,
        ms: took(),
        checkStatus,
        error: { code: 'interrupted', message: 'Interrupted.' },
      };
    if (check.exit === 127 || check.exit === 126) throw missingAgyctl(target, options.remoteAgyctl, check.stderr);
    if (check.status === undefined) throw checkFailed(target, check);
    if (check.exit === EXIT.ok && !options.force)
      return { ...base, result: 'healthy', exit: EXIT.ok, ms: took(), checkStatus, error: null };
    emit({
      type: 'host-login',
      host: target.name,
      healthy: check.exit === EXIT.ok,
      status: check.status,
      findings: check.findings,
    });
    const r = await connectOver({ io, master, options, target, emit: hostEmit });
    const result: HostOutcome =
      r.exit === EXIT.ok ? 'logged-in' : r.exit === EXIT.interrupted ? 'interrupted' : 'failed';
    const remote = (r.data?.connect ?? {}) as { remoteExit?: unknown };
    const error =
      r.exit === EXIT.ok
        ? null
        : {
            code: r.exit === EXIT.interrupted ? 'interrupted' : 'remote-login-failed',
            message: `the remote login on ${target.name} exited with code ${String(remote.remoteExit ?? r.exit)}`,
          };
    return { ...base, result, exit: r.exit, ms: took(), checkStatus, error };
  } catch (err) {
    const agy =
      io.ctx.signal.aborted && !(err instanceof AgyError && err.exit !== EXIT.interrupted)
        ? new AgyError(EXIT.interrupted, 'interrupted', 'Interrupted.')
        : toAgyError(err);
    if (agy.exit === EXIT.internal) throw err; // a bug stays a bug
    const result: HostOutcome = agy.exit === EXIT.interrupted ? 'interrupted' : 'failed';
    return { ...base, result, exit: agy.exit, ms: took(), checkStatus, error: agy.toJSON() };
  } finally {
    await master.close();
  }
}

function missingAgyctl(target: ConnectTarget, remoteAgyctl: string, said: string): AgyError {
  return new AgyError(
    EXIT.server,
    'remote-agyctl-missing',
    `agyctl could not be run on ${target.name} as \`${remoteAgyctl}\`${said ? ` (${said})` : ''}.`,
    {
      hint: INSTALL_ON_THE_BOX,
    },
  );
}

function checkFailed(target: ConnectTarget, check: RemoteCheck): AgyError {
  const { exit, stderr: said } = check;
  if (check.timedOut)
    return new AgyError(EXIT.timeout, 'timeout', `agyctl check on ${target.name} did not finish in time.`, {
      hint: `run \`agyctl check --live\` on ${target.name} to see why`,
    });
  return new AgyError(
    EXIT.server,
    'remote-failed',
    `agyctl check on ${target.name} exited with ${exit ?? 'a signal'} without a report${said ? `: ${said}` : '.'}`,
    { hint: `run \`agyctl check --live\` on ${target.name} to see what happens there` },
  );
}

function notRun(target: ConnectTarget): HostResult {
  return {
    host: target.name,
    destination: target.destination,
    result: 'not-run',
    exit: EXIT.interrupted,
    ms: 0,
    checkStatus: null,
    error: null,
  };
}

/** The highest exit code of any host: 130 when interrupted, else e.g. 4 (SSH) over 3 (auth). */
export function worstExit(results: readonly HostResult[]): ExitCode {
  const worst = results.reduce((w, r) => Math.max(w, r.exit), 0);
  return asExitCode(worst);
}

function countBy(results: readonly HostResult[]): Record<HostOutcome, number> {
  const counts: Record<HostOutcome, number> = { 'logged-in': 0, healthy: 0, failed: 0, interrupted: 0, 'not-run': 0 };
  for (const r of results) counts[r.result] += 1;
  return counts;
}
