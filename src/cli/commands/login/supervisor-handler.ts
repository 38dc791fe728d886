/** The supervisor's work (see register.ts): read the request, run the login with its events streamed to clients, record the outcome. */
import path from 'node:path';
import { asExitCode, EXIT, InterruptedError, TimeoutError } from '../../../core/errors.js';
import { type CommandIO, nullTracer, type Tracer } from '../../../core/io.js';
import { type LoginRequest, ORPHAN_GRACE_VAR } from '../../../login/events.js';
import type { LoginPorts } from '../../../login/supervisor.js';
import { MAX_DURATION_MS, parseDurationText } from '../../../util/duration.js';
import { relayFd, TRACE_FD_VAR } from '../../../util/os/tree-owner.js';
import type { CommandResult, HandlerArgs, HandlerIO, RunContext } from '../../action.js';
import { commandError } from '../../command-error.js';

async function runOne(req: LoginRequest, env: NodeJS.ProcessEnv, ports: LoginPorts) {
  // No terminal here: the login's events and sentences go to the attached clients, which render them.
  const ctx: RunContext = {
    env,
    cwd: req.cwd,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: ports.signal,
  };
  let tracer: Tracer = nullTracer;
  try {
    if (req.opts.trace) {
      const { FileTracer } = await import('../../../acp/file-tracer.js');
      tracer = new FileTracer(relayFd(env, TRACE_FD_VAR) ?? req.opts.trace);
    }
    const io: CommandIO = { ctx, opts: { ...req.opts }, out: ports.out, tracer };
    const { runLogin } = await import('../../../login/run-login.js');
    await runLogin(io, req.login, ports.show, ports.pastes);
    return { exit: EXIT.ok };
  } catch (thrown) {
    // The mapping main uses for a foreground command (a state dir that is a file is exit 2 naming the path, not a bug).
    let err = commandError(thrown, req.opts.stateDir);
    if (ports.signal.aborted && err.exit !== EXIT.ok) {
      err =
        ports.signal.reason === 'deadline'
          ? new TimeoutError(
              `The login did not end by its deadline (${new Date(req.hardDeadline).toISOString()}); its server was stopped.`,
              'run `agyctl login` again',
            )
          : new InterruptedError();
    }
    // The log (0600, in the record dir) gets a bug's stack; expected failures are in the outcome.
    if (err.exit === EXIT.internal)
      process.stderr.write(`${thrown instanceof Error ? String(thrown.stack) : String(thrown)}\n`);
    return {
      exit: err.exit,
      code: err.code,
      message: err.message,
      ...(err.hint ? { hint: err.hint } : {}),
      ...(err.details ? { details: err.details } : {}),
    };
  } finally {
    tracer.close();
  }
}

/** AGYCTL_LOGIN_ORPHAN_GRACE (set by `connect` for its remote login): a duration; anything else is ignored. */
function orphanGrace(env: NodeJS.ProcessEnv): { orphanGraceMs?: number } {
  const text = env[ORPHAN_GRACE_VAR];
  if (text === undefined) return {};
  const parsed = parseDurationText(text);
  return parsed.ok && parsed.ms > 0 && parsed.ms <= MAX_DURATION_MS ? { orphanGraceMs: parsed.ms } : {};
}

/** `__login-supervisor`'s one flag (required by commander). */
export interface SupervisorFlags {
  record: string;
}

export async function supervisorCommand(
  io: HandlerIO,
  { options }: HandlerArgs<SupervisorFlags>,
): Promise<CommandResult> {
  io.ctx.claimHangup?.(() => undefined); // no terminal, but never let a stray SIGHUP end a login
  const dir = path.resolve(options.record);
  const { recordPathsIn, checkRecordDir } = await import('../../../login/record.js');
  const { recordProcess } = await import('../../../util/os/process.js');
  const { readFileNoFollow } = await import('../../../util/os/safe-fs.js');
  const { runSupervisor, signalReady } = await import('../../../login/supervisor.js');
  const paths = recordPathsIn(dir);
  checkRecordDir(paths);
  const req = JSON.parse(readFileNoFollow(paths.request, 'the login request').toString('utf8')) as LoginRequest;
  const self = recordProcess(process.pid);
  const outcome = await runSupervisor({
    paths,
    state: {
      version: 1,
      id: req.id,
      stateDir: req.opts.stateDir,
      pid: process.pid,
      pidStart: self.start,
      ...(self.cmd ? { pidCmd: self.cmd } : {}),
      startedAt: req.startedAt,
      deadline: req.deadline,
      endBy: req.hardDeadline,
      phase: 'starting',
      ...(req.login.method ? { method: req.login.method } : {}),
    },
    hardDeadline: req.hardDeadline,
    signal: io.ctx.signal,
    onReady: signalReady,
    run: (ports) => runOne(req, io.ctx.env, ports),
    ...orphanGrace(io.ctx.env),
  });
  return { exit: asExitCode(outcome.exit) };
}
