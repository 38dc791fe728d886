/**
 * run(argv, ctx) -> exit code. The only place that decides the exit code and
 * the only place that ends the process (in main(), for the real process).
 */
import { Command, CommanderError } from 'commander';
import { killAllChildren } from '../acp/children.js';
import { AgyError, EXIT, EXIT_TABLE, type ExitCode, ReaderGone, toAgyError } from '../core/errors.js';
import { nullTracer } from '../core/io.js';
import { agyctlVersion } from '../core/runtime.js';
import { CALLER_CWD_VAR, dropToOwner } from '../util/os/tree-owner.js';
import {
  type ActionFactory,
  type ActionSpec,
  type Handler,
  type Invocation,
  invocationOf,
  type RunContext,
} from './action.js';
import { COMMANDS } from './commands/index.js';
import { addGlobalOptions, inheritedOwnerTimeout } from './globals.js';
import { EXIT_CODES_TOPIC, helpTarget, helpTopic } from './help-request.js';
import type { RunState } from './invoke.js';
import { Output } from './terminal/output.js';
import { usageErrorFrom } from './usage-error.js';

/** Help is about to be shown: the examples module is loaded only then, so other runs start without it. */
const wantsHelp = (argv: string[]): boolean =>
  argv.length === 0 || argv.some((a) => a === 'help' || a === '--help' || a === '-h');

async function buildProgram(
  argv: string[],
  ctx: RunContext,
  onInvoke: (inv: Invocation) => Promise<void>,
): Promise<Command> {
  const program = new Command('agyctl')
    .description("Run Google's antigravity-acp agent server on headless boxes: settings, login, checks, backups.")
    .version(agyctlVersion(), serverVersionFlag(argv) ? '-V' : '-V, --version', 'print the version')
    // A subcommand lists the program's options as global, not its parent's own (`login status` takes no --timeout),
    // so its help is padded to its own options; the owner's --timeout of settings and sessions applies below them.
    .configureHelp({
      showGlobalOptions: true,
      visibleGlobalOptions: (cmd) =>
        cmd.parent ? [...inheritedOwnerTimeout(cmd), ...programOf(cmd).options.filter((option) => !option.hidden)] : [],
    })
    .exitOverride()
    .configureOutput({
      writeOut: (s: string) => ctx.stdout.write(s),
      writeErr: (s: string) => ctx.stderr.write(s),
      outputError: () => {}, // main renders usage errors itself (one line, --json aware)
    });
  addGlobalOptions(program);
  const action: ActionFactory =
    (handler, spec = {}) =>
    (...commanderArgs: unknown[]) =>
      onInvoke(invocationOf(handler as Handler, spec as ActionSpec, commanderArgs));
  for (const register of COMMANDS) register(program, action);
  for (const cmd of program.commands) cmd.exitOverride();
  if (wantsHelp(argv)) (await import('./help-text.js')).addHelpExtras(program, helpWidth(ctx));
  return program;
}

/** `agyctl server install … --version V` names the server's version; commander would give --version to the program. */
function serverVersionFlag(argv: string[]): boolean {
  const at = argv.findIndex((a) => a === '--version' || a.startsWith('--version='));
  const server = argv.indexOf('server');
  return server >= 0 && at > server;
}

const programOf = (cmd: Command): Command => (cmd.parent ? programOf(cmd.parent) : cmd);

/** The width commander's help wraps to: the terminal's, else 80. */
const helpWidth = (ctx: RunContext): number => (ctx.stdout.isTTY && ctx.stdout.columns) || 80;

export async function run(argv: string[], ctx: RunContext): Promise<ExitCode> {
  const state: RunState = {
    exit: EXIT.ok,
    out: new Output(ctx.stdout, ctx.stderr, { json: argv.includes('--json'), color: false, verbose: false }),
    streaming: false,
    tracer: nullTracer,
  };
  // What a chosen command runs with (its options, root's run as the owner, the handler) loads only then.
  const onInvoke = async (invocation: Invocation): Promise<void> =>
    (await import('./invoke.js')).invoke(invocation, { argv, ctx, state });

  let program: Command | undefined;
  try {
    program = await buildProgram(argv, ctx, onInvoke);
    if (argv.length === 0) {
      // As gh: bare `agyctl` is a request for help, answered on stdout with exit 0 (commander would use stderr).
      program.outputHelp();
      return EXIT.ok;
    }
    const topic = helpTopic(program, argv);
    if (topic) return await printHelp(program, topic, state.out, helpWidth(ctx));
    await program.parseAsync(argv, { from: 'user' });
    return state.exit;
  } catch (err) {
    if (err instanceof CommanderError && program) return commanderExit(err, program, argv, state.out);
    if (ctx.signal.reason instanceof ReaderGone) return EXIT.readerGone;
    const agy = toAgyError(err);
    if (ctx.signal.aborted && agy.exit !== EXIT.interrupted && agy.exit !== EXIT.ok)
      return reportError(new AgyError(EXIT.interrupted, 'interrupted', 'Interrupted.'), state.out, state.streaming);
    return reportError(agy, state.out, state.streaming);
  } finally {
    state.tracer.close();
  }
}

/** `agyctl help [topic…]`, wherever the global options stand. */
async function printHelp(program: Command, topic: string[], out: Output, width: number): Promise<ExitCode> {
  if (topic.length === 1 && topic[0] === EXIT_CODES_TOPIC) return await printExitCodes(out, width);
  helpTarget(program, topic).outputHelp();
  return EXIT.ok;
}

/** `agyctl help exit-codes`: every help's "Exit codes" section points here, since docs/ is not on an installed box's path. */
async function printExitCodes(out: Output, width: number): Promise<ExitCode> {
  const { renderExitCodesText } = await import('../core/exit-codes-doc.js');
  const { docsOnThisBox } = await import('./docs-path.js');
  const { wrapProse } = await import('./terminal/wrap.js');
  if (out.json) out.document({ ok: true, exitCodes: EXIT_TABLE });
  else {
    const [header = '', ...rows] = renderExitCodesText(docsOnThisBox).trimEnd().split('\n');
    // A meaning's continuation lines stand under the meaning (3 + 2 + 11 + 2 columns in).
    out.print([wrapProse(header, width), ...rows.map((row) => wrapProse(row, width, ' '.repeat(18)))].join('\n'));
  }
  return EXIT.ok;
}

/** A parse error is met before any handler runs, while `out` is still the one made for `--json` in argv. */
function commanderExit(err: CommanderError, program: Command, argv: string[], out: Output): ExitCode {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
    return EXIT.ok;
  if (err.code === 'commander.executeSubCommandAsync' && err.exitCode === 0) return EXIT.ok;
  const usage = usageErrorFrom(err, program, argv);
  if (out.json) out.document({ ok: false, error: usage.toJSON() });
  else out.error(usage.message, usage.hint);
  return EXIT.usage;
}

export function reportError(err: AgyError, out: Output, streaming: boolean): ExitCode {
  if (out.json && streaming) out.event({ event: 'error', ...err.toJSON(), ...(err.details ?? {}) });
  else if (out.json) out.document({ ok: false, error: err.toJSON(), ...(err.details ?? {}) });
  // With --json the error has one place, stdout's JSON (docs/json.md); --verbose repeats it on stderr for a person.
  if (!out.json || out.options.verbose) out.error(err.message, err.hint);
  // --verbose: where a bug happened, under its one error line (the message is in that line, not repeated).
  if (err.exit === EXIT.internal && err.cause instanceof Error && out.options.verbose) {
    const frames = String(err.cause.stack ?? '')
      .split('\n')
      .filter((line) => /^\s+at /.test(line));
    if (frames.length > 0) out.info(frames.join('\n'), { verbatim: true });
  }
  return err.exit;
}

/** Entry point for bin/agyctl.js: wires the real process to run(). */
export async function main(): Promise<void> {
  // Started by root to work in a user's tree (as-owner.ts): become that user before anything else.
  let callerCwd: string | undefined;
  try {
    // The child runs in the owner's home; root's cwd only resolves the relative paths root was given.
    if (dropToOwner(process.env)) callerCwd = process.env[CALLER_CWD_VAR];
    delete process.env[CALLER_CWD_VAR];
  } catch (err) {
    process.stderr.write(`Error: could not act as the state dir's owner: ${(err as Error).message}\n`);
    process.exit(EXIT.internal);
  }
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (): void => {
    signals += 1;
    if (signals > 1) {
      // A second Ctrl-C means "now": kill what we started and leave.
      killAllChildren('SIGKILL');
      process.exit(EXIT.interrupted);
    }
    controller.abort();
  };
  // A claimed SIGHUP (a login attached to its supervisor) means "the terminal is gone": leave quietly, cancel nothing.
  let onHangup: (() => void) | undefined;
  const claimHangup = (fn: () => void): (() => void) => {
    onHangup = fn;
    return () => {
      if (onHangup === fn) onHangup = undefined;
    };
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, onSignal);
  process.on('SIGHUP', () => {
    if (!onHangup) return onSignal();
    // Writes to a hung-up terminal fail with EIO; that must not crash the way out.
    for (const s of [process.stdout, process.stderr, process.stdin]) s.on('error', () => undefined);
    onHangup();
  });
  process.on('exit', () => killAllChildren('SIGKILL'));
  // A reader that went away (`| head`) ends the run quietly, as git does: stop the work, print nothing.
  // A command that listens for the stream's errors itself owns them (`backup --archive -`: a consumer
  // that dies mid-archive is a failed backup, reported loudly).
  // A login attached to its supervisor takes a lost reader as it takes SIGHUP (its ssh session went away):
  // it goes on under the supervisor.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      if (stream.listenerCount('error') > 1) return;
      if (onHangup) {
        for (const s of [process.stdout, process.stderr, process.stdin]) s.on('error', () => undefined);
        onHangup();
      } else if (!controller.signal.aborted) controller.abort(new ReaderGone());
    });
  const ctx: RunContext = {
    env: process.env,
    cwd: callerCwd ?? process.cwd(),
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
    claimHangup,
  };
  const code = await run(process.argv.slice(2), ctx);
  killAllChildren('SIGKILL');
  if (controller.signal.reason instanceof ReaderGone) process.exit(EXIT.readerGone);
  // Flush stdout before leaving: a pipe reader must get the whole JSON document. A reader that went away
  // while the last lines were in flight is known only now: the run still ends as a lost reader.
  process.stdout.write('', () => process.exit(readerWentAway(controller.signal) ? EXIT.readerGone : code));
}

/** Whether stdout's reader went away: said by the abort, or by a write whose EPIPE came after the command returned. */
function readerWentAway(signal: AbortSignal): boolean {
  return (
    signal.reason instanceof ReaderGone || (process.stdout.errored as NodeJS.ErrnoException | null)?.code === 'EPIPE'
  );
}
