/**
 * Root on a user's state dir: the command runs again, in a child that
 * becomes the state dir's owner first thing (util/os/tree-owner.ts), so every
 * file it touches and every server it starts is that user's and the kernel
 * decides what it may touch. Root keeps only root's own paths: the --trace
 * file and the --prometheus file, fed by the child through pipes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Command } from 'commander';
import { signalGroup } from '../acp/children.js';
import { openTraceFile } from '../acp/file-tracer.js';
import { writeMetricsText } from '../check/metrics-target.js';
import { AgyError, asExitCode, EXIT, type ExitCode } from '../core/errors.js';
import { resolveUserPath } from '../core/paths.js';
import { agyctlEntryArgs, bundledRuntime } from '../core/runtime.js';
import { descendantsOf } from '../util/os/process.js';
import {
  ARCHIVE_SHOWN_VAR,
  AS_OWNER_VAR,
  CALLER_CWD_VAR,
  METRICS_FD_VAR,
  OWNER_NODE_OPTIONS,
  TRACE_FD_VAR,
  type TreeOwner,
} from '../util/os/tree-owner.js';
import { sanitizeForTerminal } from '../util/terminal-text.js';
import type { GlobalOptions, RunContext } from './action.js';
import { ownerTimeoutCommand } from './globals.js';
import { parseDurationOption } from './parse-options.js';

/** How a command runs when root meets a user's state dir: all of it as the owner, or as today (not in that tree). */
export function runsAsOwner(command: Command, args: unknown[]): boolean {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  const [top, sub] = names;
  if (top === 'sessions' && sub === 'export') return args[0] === undefined; // a snapshot is root's, the live state dir is not
  return ['settings', 'login', 'logout', 'check', 'probe', 'sessions'].includes(top ?? '');
}

/** The child's PATH, as sudo's secure_path on Debian: never root's, which may name directories of root's own. */
export const OWNER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Names root's environment passes to the owner's child (docs/security.md):
 * locale, terminal and time zone, as `su -` and sudo's env_reset keep them,
 * and the settings agyctl itself reads. Everything else (root's keys and
 * tokens, its agent socket, its temp and config dirs) stays with root.
 */
export const PASSED_TO_OWNER = [
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'NO_COLOR',
  'AGYCTL_SERVER',
  'AGYCTL_PROFILE',
  'AGYCTL_STATE_DIR',
  'SSH_CONNECTION',
] as const;
const PASSED_PREFIXES = ['LC_'];

/** The owner's environment, built from nothing: the account's names, a fixed PATH, and the passed names. */
export function ownerEnv(owner: TreeOwner, opts: GlobalOptions, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env))
    if (
      value !== undefined &&
      ((PASSED_TO_OWNER as readonly string[]).includes(name) || PASSED_PREFIXES.some((p) => name.startsWith(p)))
    )
      out[name] = value;
  return {
    ...out,
    PATH: OWNER_PATH,
    // The state dir found through root's HOME is found through the same HOME in the child (and the server uses it).
    HOME: opts.stateDirExplicit ? owner.home : (env.HOME ?? owner.home),
    USER: owner.name,
    LOGNAME: owner.name,
    SHELL: owner.shell,
    [AS_OWNER_VAR]: `${owner.uid}:${owner.gid}:${owner.name}`,
  };
}

/** How long the owner's side may outlive the command's own --timeout: the login's start-up and proof, and its teardown. */
export const OWNER_GRACE_MS = 150_000;
/** The deadline of the owner's side of a command that takes no --timeout: as ownerTimeoutOption's default (globals.ts). */
export const OWNER_DEFAULT_DEADLINE_MS = 10 * 60_000;

/**
 * Root's deadline on the owner's side of `command`: its ownerTimeoutOption's
 * --timeout; else the command's own --timeout plus OWNER_GRACE_MS (check,
 * login, logout, probe); else OWNER_DEFAULT_DEADLINE_MS.
 */
export function ownerDeadlineMs(command: Command | undefined, timeout: unknown): number {
  const owning = ownerTimeoutCommand(command);
  if (owning) return parseDurationOption('--timeout', String(owning.opts().timeout));
  if (typeof timeout !== 'string') return OWNER_DEFAULT_DEADLINE_MS;
  return parseDurationOption('--timeout', timeout) + OWNER_GRACE_MS;
}

export interface OwnerRun {
  argv: string[];
  ctx: RunContext;
  opts: GlobalOptions;
  /** Root kills the owner's side, everything it started with it, when it has not ended this long after its start. */
  deadlineMs: number;
  /** --prometheus FILE of the command (resolved), written by root from what the child sends. */
  prometheus?: string;
}

/** Runs the command as `owner`; returns its exit code. Ctrl-C and TERM reach the child, which exits 130. */
export async function runAsOwner(owner: TreeOwner, run: OwnerRun & { withStdin: boolean }): Promise<ExitCode> {
  const metrics: Relay | undefined = run.prometheus ? { variable: METRICS_FD_VAR, chunks: [] } : undefined;
  const code = await withOwnerChild(
    owner,
    {
      ...run,
      stdin: run.withStdin && carriesInput(run.ctx.stdin) ? 'relay' : 'ignore',
      stdout: 'relay',
      relays: metrics ? [metrics] : [],
    },
    () => Promise.resolve(),
  );
  const text = Buffer.concat(metrics?.chunks ?? []);
  if (run.prometheus && text.length > 0) writeMetricsText(run.prometheus, text);
  return code;
}

/** Root's stdin can bring something (a terminal, a pipe, a file), unlike `</dev/null`: the child's is then a pipe root feeds. */
function carriesInput(stdin: Readable & { isTTY?: boolean; fd?: unknown }): boolean {
  if (stdin.isTTY) return true;
  try {
    return typeof stdin.fd !== 'number' || !fs.fstatSync(stdin.fd).isCharacterDevice();
  } catch {
    return false; // closed
  }
}

/** A pipe from the child that root reads: its descriptor number goes to the child in `variable`. */
export interface Relay {
  variable: string;
  /** What came through it (unless `consume` reads it). */
  chunks: Buffer[];
  consume?: (from: Readable) => Promise<unknown>;
}

export interface OwnerChild extends OwnerRun {
  /** relay: root's stdin copied in; pipe: `feed` writes it; ignore: empty. */
  stdin: 'relay' | 'pipe' | 'ignore';
  /** relay: copied to root's stdout, sanitized for a terminal; pipe: `feed` reads it. */
  stdout: 'relay' | 'pipe';
  relays: Relay[];
}

/** After Ctrl-C, TERM or the deadline: the child's TERM, then SIGKILL for it and all it started. */
const KILL_AFTER_MS = 700;

/**
 * Starts agyctl `argv` as `owner` (it drops itself: dropToOwner), runs
 * `feed` with the child while it works (writing its stdin, reading its
 * stdout), and returns the child's exit code. The child is what OpenSSH's
 * unprivileged child is: its own session with no terminal, pipes for its
 * stdio (its stderr reaches root's terminal only sanitized), an environment
 * built from nothing, the owner's home as its cwd, and a deadline. The
 * --trace file stays root's: the child gets a descriptor open for appending.
 */
export async function withOwnerChild(
  owner: TreeOwner,
  run: OwnerChild,
  feed: (child: ChildProcess) => Promise<unknown>,
): Promise<ExitCode> {
  const traceFd = run.opts.trace ? openTraceFile(resolveUserPath(run.ctx.cwd, run.opts.trace, run.ctx.env)) : undefined;
  const env = ownerEnv(owner, run.opts, run.ctx.env);
  for (const name of [ARCHIVE_SHOWN_VAR] as const) if (run.ctx.env[name] !== undefined) env[name] = run.ctx.env[name];
  env[CALLER_CWD_VAR] = run.ctx.cwd;
  run.relays.forEach((r, i) => {
    env[r.variable] = String(3 + i);
  });
  if (traceFd !== undefined) env[TRACE_FD_VAR] = String(3 + run.relays.length);
  const { args, nodeOptions } = ownerNodeFlags();
  if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...args, ...process.execArgv, ...agyctlEntryArgs(), ...run.argv], {
      cwd: ownerCwd(owner),
      env,
      detached: true, // its own session: no controlling terminal, and its group is its own
      stdio: [
        run.stdin === 'ignore' ? 'ignore' : 'pipe',
        'pipe',
        'pipe',
        ...run.relays.map(() => 'pipe' as const),
        ...(traceFd === undefined ? [] : [traceFd]),
      ],
    });
  } finally {
    if (traceFd !== undefined) fs.closeSync(traceFd);
  }
  return superviseOwnerChild(child, run, feed);
}

async function superviseOwnerChild(
  child: ChildProcess,
  run: OwnerChild,
  feed: (child: ChildProcess) => Promise<unknown>,
): Promise<ExitCode> {
  const pid = child.pid;
  const killTree = (): void => {
    if (pid !== undefined) killOwnerTree(pid);
  };
  let ending: NodeJS.Timeout | undefined;
  const stopChild = (): void => {
    child.kill('SIGTERM'); // the child exits 130 on TERM; one stuck (or stopped) is killed with all it started
    ending ??= setTimeout(() => {
      killTree();
      for (const s of child.stdio) s?.destroy();
    }, KILL_AFTER_MS);
  };
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    stopChild();
  }, run.deadlineMs);
  run.ctx.signal.addEventListener('abort', stopChild, { once: true });
  // Root's terminal went away: the child (no longer on it) hears it as it would have, and decides (a login goes on).
  const releaseHangup = run.ctx.claimHangup?.(() => void child.kill('SIGHUP'));
  process.on('exit', killTree);
  try {
    const exited = exitOf(child);
    const copies = [relaySanitized(child.stderr!, run.ctx.stderr)];
    if (run.stdout === 'relay') copies.push(relaySanitized(child.stdout!, run.ctx.stdout));
    if (run.stdin === 'relay') copyIn(run.ctx.stdin, child.stdin!);
    const reading = run.relays.map((r, i) =>
      (r.consume ?? ((from) => collect(from, r.chunks)))(child.stdio[3 + i] as Readable),
    );
    const fed = feed(child).catch(() => undefined); // the child's exit code tells what became of it
    let code = await exited;
    await Promise.allSettled([fed, ...reading, ...copies]);
    if (timedOut) throw ownerTimedOut(run.deadlineMs);
    if (run.ctx.signal.aborted) code = EXIT.interrupted;
    return code;
  } finally {
    clearTimeout(deadline);
    clearTimeout(ending);
    if (run.stdin === 'relay') {
      run.ctx.stdin.unpipe?.();
      run.ctx.stdin.pause?.();
    }
    run.ctx.signal.removeEventListener('abort', stopChild);
    releaseHangup?.();
    process.off('exit', killTree);
    // What is left in the child's group (a detached login's supervisor has a session of its own). A group
    // with a member keeps its id from being reused, so this signal reaches only what the child started.
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
  }
}

/** SIGKILL for the child's group and every process below it (servers lead groups of their own), until none is left. */
function killOwnerTree(pid: number): void {
  for (let round = 0; round < 5; round++) {
    const below = descendantsOf(pid);
    signalGroup(pid, 'SIGKILL');
    for (const p of below) {
      signalGroup(p, 'SIGKILL');
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (below.length === 0) return;
  }
}

function ownerTimedOut(deadlineMs: number): AgyError {
  return new AgyError(
    EXIT.timeout,
    'owner-timeout',
    `The work as the state dir's owner did not end within ${Math.round(deadlineMs / 1000)} s; it was stopped, with everything it started.`,
    {
      hint: "give it longer with --timeout, or look for what holds it up (a stopped process of the state dir's owner, a slow disk)",
    },
  );
}

/** Where the child runs: the owner's home when it is a directory, else `/`; never root's cwd, which the owner may not enter. */
function ownerCwd(owner: TreeOwner): string {
  return fs.statSync(owner.home, { throwIfNoEntry: false })?.isDirectory() ? owner.home : '/';
}

/**
 * The node flag that keeps the inspector shut on SIGUSR1, where the runtime
 * has it: on the command line for node, in NODE_OPTIONS for the executable
 * (whose command line is agyctl's). The child also holds the signal itself.
 */
function ownerNodeFlags(): { args: string[]; nodeOptions?: string } {
  if (!process.allowedNodeEnvironmentFlags.has(OWNER_NODE_OPTIONS)) return { args: [] };
  return bundledRuntime() ? { args: [], nodeOptions: OWNER_NODE_OPTIONS } : { args: [OWNER_NODE_OPTIONS] };
}

/** The child's output on its way to root's stdout or stderr: every control character and escape sequence removed. */
export function relaySanitized(from: Readable, to: NodeJS.WritableStream): Promise<void> {
  const decoder = new StringDecoder('utf8');
  return new Promise((resolve) => {
    from.on('data', (chunk: Buffer) => {
      const text = sanitizeForTerminal(decoder.write(chunk));
      if (text) to.write(text);
    });
    from.once('close', () => {
      const rest = sanitizeForTerminal(decoder.end());
      if (rest) to.write(rest);
      resolve();
    });
    from.on('error', () => undefined);
  });
}

function copyIn(from: Readable, to: Writable): void {
  to.on('error', () => undefined); // the child stopped reading: its exit code tells why
  from.pipe(to);
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
