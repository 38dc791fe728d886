/** The supervisor's work (see register.ts): read the request, run the login with tapped streams, record the outcome. */
import path from 'node:path';
import { asExitCode, EXIT, InterruptedError, TimeoutError } from '../../../core/errors.js';
import { nullTracer, type Tracer } from '../../../core/io.js';
import { type LoginRequest, ORPHAN_GRACE_VAR } from '../../../login/detached/contract.js';
import type { LoginStreams } from '../../../login/detached/supervisor.js';
import { asLoginEvent, type LoginEvent } from '../../../login/events.js';
import { MAX_DURATION_MS, parseDurationText } from '../../../util/duration.js';
import { relayFd, TRACE_FD_VAR } from '../../../util/os/tree-owner.js';
import type { CommandResult, HandlerArgs, HandlerIO, RunContext, TtyWritable } from '../../action.js';
import { commandError } from '../../command-error.js';
import { loadPalette, Output } from '../../terminal/output.js';
import { loginPrinter, pasteWhere } from '../login/printers.js';

/** An Output whose events also reach the supervisor, whatever the mode (status and `login finish` answers come from them). */
class TappedOutput extends Output {
  /** The supervisor's hook for every event, set once its streams exist. */
  tap: (e: LoginEvent) => void = () => undefined;

  override event(event: Record<string, unknown>): void {
    super.event(event);
    const e = asLoginEvent(event); // the login emits only LoginEvents (contract.ts)
    if (e) this.tap(e);
  }
}

async function runOne(req: LoginRequest, env: NodeJS.ProcessEnv, streams: LoginStreams) {
  // The login styles its output as it would on the attached agyctl's own streams: colour (and TTY-only lines) only where those are terminals.
  const stdout: TtyWritable = Object.assign(streams.stdout, { isTTY: Boolean(req.tty?.stdout) });
  // The starting terminal's size, as it was then: the QR code is fitted to it (src/login/qr.ts).
  const size = req.tty?.stderrSize;
  const stderr: TtyWritable = Object.assign(streams.stderr, {
    isTTY: Boolean(req.tty?.stderr),
    columns: size?.columns,
    rows: size?.rows,
  });
  const color = req.opts.color && Boolean(req.tty?.stdout || req.tty?.stderr);
  const out = new TappedOutput(
    stdout,
    stderr,
    { json: req.opts.json, color, verbose: req.opts.verbose },
    await loadPalette(color),
  );
  out.tap = streams.onEvent;
  // Where a pasted address goes is known here, from how the login was started.
  const printer = loginPrinter(out, { qr: req.login.qr, pasteWhere: pasteWhere(req.login), stderr });
  const ctx: RunContext = { env, cwd: req.cwd, stdin: streams.stdin, stdout, stderr, signal: streams.signal };
  let tracer: Tracer = nullTracer;
  try {
    if (req.opts.trace) {
      const { FileTracer } = await import('../../../acp/file-tracer.js');
      tracer = new FileTracer(relayFd(env, TRACE_FD_VAR) ?? req.opts.trace);
    }
    const io: HandlerIO = { ctx, opts: { ...req.opts }, out, tracer };
    const { runLogin } = await import('../../../login/run-login.js');
    const report = await runLogin(io, req.login, (event) => printer.show(event));
    printer.finish(report, req.login.keepProbeSession);
    return { exit: EXIT.ok };
  } catch (thrown) {
    // The mapping main uses for a foreground command (a state dir that is a file is exit 2 naming the path, not a bug).
    let err = commandError(thrown, req.opts.stateDir);
    if (streams.signal.aborted && err.exit !== EXIT.ok) {
      err =
        streams.signal.reason === 'deadline'
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
  const { recordPathsIn, checkRecordDir } = await import('../../../login/detached/record.js');
  const { recordProcess } = await import('../../../util/os/process.js');
  const { readFileNoFollow } = await import('../../../util/os/safe-fs.js');
  const { runSupervisor, signalReady } = await import('../../../login/detached/supervisor.js');
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
    run: (streams) => runOne(req, io.ctx.env, streams),
    ...orphanGrace(io.ctx.env),
  });
  return { exit: asExitCode(outcome.exit) };
}
