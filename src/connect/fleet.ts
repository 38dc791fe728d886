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
import type { Reporter } from '../core/reporter.js';
import { formatDuration } from '../util/duration.js';
import { SshMaster } from './control-master.js';
import type { FleetTarget } from './inventory.js';
import { type RemoteCheck, runRemoteCheck } from './remote-check.js';
import { type ConnectOptions, connectOver, INSTALL_ON_THE_BOX } from './run-connect.js';

export interface FleetOptions extends Omit<ConnectOptions, 'destination'> {
  force: boolean;
}

export type HostOutcome = 'logged-in' | 'healthy' | 'failed' | 'interrupted' | 'not-run';

export interface HostResult {
  host: string;
  destination: string;
  result: HostOutcome;
  exit: number;
  ms: number;
  /** The remote check's status before the login, when it ran. */
  checkStatus: string | null;
  error: { code: string; message: string; hint?: string } | null;
}

export async function runFleetConnect(io: CommandIO, targets: FleetTarget[], o: FleetOptions): Promise<CommandResult> {
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
      const current = next ?? prepare(io, target, o, false);
      next = undefined;
      if (!io.out.json) io.out.info(io.out.e.bold(`[${i + 1}/${targets.length}] ${target.name}`));
      const turnAt = Date.now();
      let prepared = await current;
      if (prepared.error !== undefined && prepared.background && !io.ctx.signal.aborted) {
        await prepared.master.close();
        prepared = await prepare(io, target, o, false);
      }
      const following = targets[i + 1];
      if (following && !io.ctx.signal.aborted) next = prepare(io, following, o, true);
      const result = await finish(io, prepared, o, turnAt);
      results.push(result);
      io.out.event({ event: 'host-result', ...result });
      if (!io.out.json) reportHost(io.out, result);
    }
  } finally {
    if (next) await release(next);
  }
  const exit = worstExit(results);
  const counts = countBy(results);
  io.out.event({ event: 'fleet-summary', ok: exit === EXIT.ok, exit, counts, hosts: results });
  if (!io.out.json) printTable(io.out, results);
  return { exit, data: { fleet: { hosts: results, counts } } };
}

interface Prepared {
  target: FleetTarget;
  master: SshMaster;
  /** Started ahead of its turn, without a terminal. */
  background: boolean;
  connectMs?: number;
  check?: RemoteCheck;
  error?: unknown;
}

/** Connect to a host and run `agyctl check --live` there; never throws (the error is kept for the host's turn). */
async function prepare(io: CommandIO, target: FleetTarget, o: FleetOptions, ahead: boolean): Promise<Prepared> {
  const background = ahead && Boolean(io.ctx.stdin.isTTY);
  const master = SshMaster.start({
    destination: target.destination,
    sshOptions: [...(background ? ['BatchMode=yes'] : []), ...o.sshOptions, ...target.sshOptions],
    env: io.ctx.env,
    tempRoot: tempRoot(io.ctx.env),
    interactive: !background && Boolean(io.ctx.stdin.isTTY),
    onLog: (line) => io.out.verbose(`[ssh ${target.name}] ${line}`),
  });
  const prepared: Prepared = { target, master, background };
  try {
    prepared.connectMs = await master.waitReady(o.sshTimeoutMs, io.ctx.signal);
    prepared.check = await runRemoteCheck(master, o.remoteAgyctl, io.ctx.signal);
  } catch (err) {
    prepared.error = err;
  }
  return prepared;
}

async function release(pending: Promise<Prepared>): Promise<void> {
  await (await pending).master.close();
}

async function finish(io: CommandIO, p: Prepared, o: FleetOptions, turnAt: number): Promise<HostResult> {
  const { target, master } = p;
  const hostIo: CommandIO = { ...io, out: tagged(io.out, target.name) };
  const base = { host: target.name, destination: target.destination };
  const took = (): number => Date.now() - turnAt;
  let checkStatus: string | null = null;
  try {
    if (p.error !== undefined) throw p.error;
    const check = p.check!;
    hostIo.out.event({ event: 'connected', destination: target.destination, ms: p.connectMs });
    checkStatus = check.status ?? null;
    hostIo.out.event({
      event: 'checked',
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
    if (check.exit === 127 || check.exit === 126) throw missingAgyctl(target, o.remoteAgyctl, check.stderr);
    if (check.status === undefined) throw checkFailed(target, check.exit, check.stderr, check.timedOut);
    if (check.exit === EXIT.ok && !o.force)
      return { ...base, result: 'healthy', exit: EXIT.ok, ms: took(), checkStatus, error: null };
    if (!io.out.json)
      io.out.info(
        check.exit === EXIT.ok
          ? `${target.name} is healthy; logging in anyway (--force).`
          : `${target.name}: ${check.status}${check.findings.length ? ` (${check.findings.join('; ')})` : ''}; logging in.`,
      );
    const r = await connectOver(hostIo, master, {
      ...o,
      destination: target.destination,
      sshOptions: [...o.sshOptions, ...target.sshOptions],
    });
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

/** The same Reporter, with every --json event of this host carrying `host`. */
function tagged(out: Reporter, host: string): Reporter {
  const copy = Object.create(out) as Reporter;
  copy.event = (event) => out.event({ ...event, host });
  return copy;
}

function missingAgyctl(target: FleetTarget, remoteAgyctl: string, said: string): AgyError {
  return new AgyError(
    EXIT.server,
    'remote-agyctl-missing',
    `agyctl could not be run on ${target.name} as \`${remoteAgyctl}\`${said ? ` (${said})` : ''}.`,
    {
      hint: INSTALL_ON_THE_BOX,
    },
  );
}

function checkFailed(target: FleetTarget, exit: number | null, said: string, timedOut: boolean): AgyError {
  if (timedOut)
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

function notRun(target: FleetTarget): HostResult {
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

function reportHost(out: Reporter, r: HostResult): void {
  if (r.result === 'healthy')
    out.info(
      out.e.green(`${r.host}: already healthy (agyctl check --live passed); skipped. Use --force to log in anyway.`),
    );
  else if (r.result === 'failed' && r.error) out.error(`${r.host}: ${r.error.message}`, r.error.hint);
}

function printTable(out: Reporter, results: readonly HostResult[]): void {
  const rows = [
    ['HOST', 'RESULT', 'TIME', 'EXIT', ''],
    ...results.map((r) => [
      r.host,
      r.result,
      r.result === 'not-run' ? '-' : formatDuration(r.ms),
      String(r.exit),
      r.result === 'failed' ? (r.error?.message.split('\n')[0] ?? '') : '',
    ]),
  ];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((row) => row[c]!.length)));
  out.print('');
  for (const row of rows)
    out.print(
      row
        .map((cell, c) => (c < 4 ? cell.padEnd(widths[c]!) : cell))
        .join('  ')
        .trimEnd(),
    );
}
