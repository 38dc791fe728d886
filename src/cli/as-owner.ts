/**
 * Root on a user's state dir: the command runs again, in a child that
 * becomes the state dir's owner first thing (util/os/tree-owner.ts), so every
 * file it touches and every server it starts is that user's and the kernel
 * decides what it may touch. Root keeps only root's own paths: the --trace
 * file and the --prometheus file, fed by the child through pipes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { openTraceFile } from '../acp/file-tracer.js';
import { asExitCode, EXIT, type ExitCode } from '../core/errors.js';
import { agyctlEntryArgs } from '../core/runtime.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { AS_OWNER_VAR, METRICS_FD_VAR, TRACE_FD_VAR, type TreeOwner } from '../util/os/tree-owner.js';
import type { GlobalOptions, RunContext } from './action.js';

/** How a command runs when root meets a user's state dir: all of it as the owner, or as today (not in that tree). */
export function runsAsOwner(command: Command, args: unknown[]): boolean {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  const [top, sub] = names;
  if (top === 'sessions' && sub === 'export') return args[0] === undefined; // a snapshot is root's, the live state dir is not
  return ['settings', 'login', 'logout', 'check', 'probe', 'sessions'].includes(top ?? '');
}

/** Root's settings that must not steer the owner's run (root's runtime dir, temp dir, config homes). */
const ROOTS_OWN = ['XDG_RUNTIME_DIR', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'TMPDIR'];

/** The owner's environment: theirs for HOME (unless root's HOME is how the state dir was found), never root's temp dirs. */
export function ownerEnv(owner: TreeOwner, opts: GlobalOptions, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {
    ...env,
    USER: owner.name,
    LOGNAME: owner.name,
    [AS_OWNER_VAR]: `${owner.uid}:${owner.gid}:${owner.name}`,
  };
  for (const name of ROOTS_OWN) delete out[name];
  if (opts.stateDirExplicit) out.HOME = owner.home;
  return out;
}

export interface OwnerRun {
  argv: string[];
  ctx: RunContext;
  opts: GlobalOptions;
  /** --prometheus FILE of the command (resolved), written by root from what the child sends. */
  prometheus?: string;
}

/** Runs the command as `owner`; returns its exit code. Ctrl-C and TERM reach the child, which exits 130. */
export async function runAsOwner(owner: TreeOwner, run: OwnerRun): Promise<ExitCode> {
  const metrics: Relay | undefined = run.prometheus ? { variable: METRICS_FD_VAR, chunks: [] } : undefined;
  const code = await withOwnerChild(
    owner,
    { ...run, stdin: 'inherit', stdout: 'inherit', relays: metrics ? [metrics] : [] },
    () => Promise.resolve(),
  );
  const text = Buffer.concat(metrics?.chunks ?? []);
  if (run.prometheus && text.length > 0) writeFileAtomic(run.prometheus, text, { mode: 0o644 });
  return code;
}

/** A pipe from the child that root reads: its descriptor number goes to the child in `variable`. */
export interface Relay {
  variable: string;
  /** What came through it (unless `consume` reads it). */
  chunks: Buffer[];
  consume?: (from: Readable) => Promise<unknown>;
}

export interface OwnerChild extends OwnerRun {
  stdin: 'inherit' | 'pipe' | 'ignore';
  stdout: 'inherit' | 'pipe';
  relays: Relay[];
}

/**
 * Starts agyctl `argv` as `owner` (it drops itself: dropToOwner), runs
 * `feed` with the child while it works (writing its stdin, reading its
 * stdout), and returns the child's exit code. The --trace file stays
 * root's: the child writes its lines into a pipe.
 */
export async function withOwnerChild(
  owner: TreeOwner,
  run: OwnerChild,
  feed: (child: ChildProcess) => Promise<unknown>,
): Promise<ExitCode> {
  const traceFd = run.opts.trace ? openTraceFile(path.resolve(run.ctx.cwd, run.opts.trace)) : undefined;
  const relays: Relay[] = [...run.relays];
  if (traceFd !== undefined)
    relays.push({ variable: TRACE_FD_VAR, chunks: [], consume: (from) => copyInto(from, traceFd) });
  const env = ownerEnv(owner, run.opts, run.ctx.env);
  relays.forEach((r, i) => {
    env[r.variable] = String(3 + i);
  });
  const child = spawn(process.execPath, [...process.execArgv, ...agyctlEntryArgs(), ...run.argv], {
    cwd: run.ctx.cwd,
    env,
    stdio: [run.stdin, run.stdout, 'inherit', ...relays.map(() => 'pipe' as const)],
  });
  const killChild = (): void => void child.kill('SIGKILL');
  // The child exits 130 on TERM within a second; one stuck in a blocking call is killed then.
  const stopChild = (): void => {
    child.kill('SIGTERM');
    setTimeout(killChild, 1_000).unref();
  };
  run.ctx.signal.addEventListener('abort', stopChild, { once: true });
  process.on('exit', killChild);
  try {
    const exited = exitOf(child);
    const reading = relays.map((r, i) =>
      (r.consume ?? ((from) => collect(from, r.chunks)))(child.stdio[3 + i] as Readable),
    );
    const fed = feed(child).catch(() => undefined); // the child's exit code tells what became of it
    const code = await exited;
    await Promise.allSettled([fed, ...reading]);
    return code;
  } finally {
    run.ctx.signal.removeEventListener('abort', stopChild);
    process.off('exit', killChild);
    if (traceFd !== undefined) fs.closeSync(traceFd);
  }
}

function exitOf(child: ChildProcess): Promise<ExitCode> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (signal === 'SIGINT' || signal === 'SIGTERM' || signal === 'SIGHUP') resolve(EXIT.interrupted);
      else resolve(asExitCode(code, EXIT.internal));
    });
  });
}

function copyInto(from: Readable, fd: number): Promise<void> {
  return new Promise((resolve) => {
    from.on('data', (chunk: Buffer) => fs.writeSync(fd, chunk));
    from.once('close', resolve);
  });
}

export function collect(from: Readable, chunks: Buffer[]): Promise<void> {
  return new Promise((resolve) => {
    from.on('data', (chunk: Buffer) => chunks.push(chunk));
    from.once('close', resolve);
  });
}

/** The global options again, for a child that runs one step of the command as the owner. */
export function globalArgv(opts: GlobalOptions): string[] {
  return [
    '--state-dir',
    opts.stateDir,
    // Only a profile that was asked for: a detected one the child detects again.
    ...(opts.profile && opts.profileSource === 'flag' ? ['--profile', opts.profile] : []),
    ...(opts.server ? ['--server', opts.server] : []),
    ...(opts.json ? ['--json'] : []),
    ...(opts.color ? [] : ['--no-color']),
    ...(opts.verbose ? ['--verbose'] : []),
    ...(opts.trace ? ['--trace', opts.trace] : []),
  ];
}
