/**
 * What runs once commander has chosen a command: its global options
 * resolved, root's run of it as the state dir's owner, the notice of a
 * pending login, the tracer, and the handler. main.ts loads this module only
 * then, so `--version`, help and a usage error start without it and without
 * what it imports (profiles, paths, the owner's child, the file tracer).
 */
import { EXIT, type ExitCode, usageError } from '../core/errors.js';
import type { Tracer } from '../core/io.js';
import { resolveStateDir, resolveUserPath, stateDirProblem } from '../core/paths.js';
import { defaultStateDirFor, resolveProfile } from '../profiles/choose.js';
import { ownerToBecome, relayFd, TRACE_FD_VAR } from '../util/os/tree-owner.js';
import type { GlobalOptions, Invocation, RunContext } from './action.js';
import { ownerDeadlineMs, runAsOwner, runsAsOwner } from './as-owner.js';
import { commandError } from './command-error.js';
import { Output, wantColor } from './terminal/output.js';

/** What main reports an error with and exits by; the invocation fills it in as it learns it. */
export interface RunState {
  exit: ExitCode;
  /** The Output an error is reported on: the one made for `--json` in argv until the command's own exists. */
  out: Output;
  /** A streaming command's error is an NDJSON event with --json, not a document. */
  streaming: boolean;
  tracer: Tracer;
}

/** The process run main started: its arguments, its context, and the state it reports from. */
export interface MainRun {
  argv: string[];
  ctx: RunContext;
  state: RunState;
}

/** Runs the chosen command; a thrown failure leaves as the error it is reported as (command-error.ts). */
export async function invoke(invocation: Invocation, run: MainRun): Promise<void> {
  let stateDir: string | undefined;
  try {
    const opts = globalOptionsFrom(invocation.command.optsWithGlobals(), run.ctx);
    stateDir = opts.stateDir;
    await runCommand(invocation, opts, run);
  } catch (err) {
    throw commandError(err, stateDir);
  }
}

async function runCommand(
  { handler, spec, input, command }: Invocation,
  opts: GlobalOptions,
  { argv, ctx, state }: MainRun,
): Promise<void> {
  if (runsAsOwner(command, input.args)) {
    const owner = ownerToBecome(opts.stateDir);
    if (owner) {
      const side = (await spec.asOwner?.(input, ctx)) ?? {};
      // The child writes the command's whole output; root only passes its exit code on.
      state.exit = await runAsOwner(owner, {
        argv,
        ctx,
        opts,
        deadlineMs: ownerDeadlineMs(command, input.options.timeout),
        withStdin: side.withStdin === true,
        ...(side.prometheus ? { prometheus: side.prometheus } : {}),
      });
      return;
    }
  }
  const out = await Output.create(ctx.stdout, ctx.stderr, {
    json: opts.json,
    color: opts.color,
    verbose: opts.verbose,
  });
  state.out = out;
  state.streaming = Boolean(spec.streaming);
  if (spec.readsStateDir && opts.stateDirExplicit) {
    const problem = stateDirProblem(opts.stateDir);
    if (problem) throw problem;
  }
  if (!isLoginCommand(command)) {
    // Never for login itself, which deals with its pending login.
    const { pendingLoginNotice } = await import('../login/client.js');
    const notice = pendingLoginNotice(ctx.env, opts.stateDir);
    if (notice) out.info(notice);
  }
  if (opts.trace) {
    const { FileTracer } = await import('../acp/file-tracer.js');
    state.tracer = new FileTracer(relayFd(ctx.env, TRACE_FD_VAR) ?? resolveUserPath(ctx.cwd, opts.trace, ctx.env));
  }
  const result = await handler({ ctx, opts, out, tracer: state.tracer }, input);
  state.exit = result.exit;
  if (opts.json && !state.streaming && !result.written)
    out.document({ ok: result.exit === EXIT.ok, ...(result.data ?? {}) });
}

/** login and its subcommands (and the supervisor) deal with a pending login themselves. */
function isLoginCommand(command: Invocation['command']): boolean {
  const name = command.name();
  return name === 'login' || name.startsWith('__') || command.parent?.name() === 'login';
}

export function globalOptionsFrom(raw: Record<string, unknown>, ctx: RunContext): GlobalOptions {
  const flag = raw.server as string | undefined;
  // An empty --server is a slip (an unset variable in a script), not "search PATH": refuse it. An empty AGYCTL_SERVER means unset.
  if (flag !== undefined && flag.trim() === '')
    throw usageError(
      '--server is empty.',
      'give the server command (e.g. --server /opt/agy/agy_acp_server), or leave --server out to look for it on PATH',
    );
  const server = flag ?? (ctx.env.AGYCTL_SERVER || undefined);
  const profile = resolveProfile(raw.profile as string | undefined, ctx.env, server);
  const stateDirFlag = raw.stateDir as string | undefined;
  // Like --server: an empty --state-dir is an unset variable in a script, not "the default".
  if (stateDirFlag !== undefined && stateDirFlag.trim() === '')
    throw usageError(
      '--state-dir is empty.',
      'give the server state directory (e.g. --state-dir ~/.gemini/antigravity-acp), or leave --state-dir out for the default',
    );
  return {
    stateDir: resolveStateDir(stateDirFlag, ctx.env, ctx.cwd, defaultStateDirFor(profile.id)),
    server,
    profile: profile.id,
    profileSource: profile.source,
    stateDirExplicit: Boolean(stateDirFlag ?? ctx.env.AGYCTL_STATE_DIR),
    json: Boolean(raw.json),
    color: wantColor(raw.color !== false, ctx.env),
    verbose: Boolean(raw.verbose),
    trace: raw.trace as string | undefined,
  };
}
