/**
 * The glue between commander and a command's handler: it assembles the
 * global options, the Output and the tracer, runs the handler, and hands the
 * result to main. Command files use `action(handler)` and never touch exit
 * codes or process state themselves.
 */
import type { Command } from 'commander';
import type { CommandResult, GlobalOptions, HandlerIO, RunContext } from './context.js';

/**
 * What commander hands a handler. `O` is the command's own flags interface
 * (declared next to its handler, spelled as commander produces them: camelCase
 * keys, strings for values, booleans for switches, arrays for repeatables);
 * the handler checks the values once and turns them into the use case's input.
 */
export interface HandlerArgs<O = Record<string, unknown>> {
  /** Positional arguments, in order (variadic ones as arrays). */
  args: unknown[];
  /** This command's own options (globals are in io.opts). */
  options: O;
}

// biome-ignore lint/suspicious/noExplicitAny: a handler names its own flags type; the factory accepts any of them
export type Handler<O = any> = (io: HandlerIO, input: HandlerArgs<O>) => Promise<CommandResult>;

export interface ActionSpec {
  /** Streaming commands print NDJSON events in --json mode instead of one document. */
  streaming?: boolean;
  /**
   * The command reads an existing state dir (check, sessions, backup): a --state-dir or AGYCTL_STATE_DIR that
   * is missing or not a directory is refused before it runs, with the same exit and message everywhere.
   */
  readsStateDir?: boolean;
}

export type ActionFactory = <O = Record<string, unknown>>(
  handler: Handler<O>,
  spec?: ActionSpec,
) => (...commanderArgs: unknown[]) => Promise<void>;

export interface Invocation {
  handler: Handler;
  spec: ActionSpec;
  input: HandlerArgs;
  command: Command;
}

/** Commander calls an action with the positionals, then the options object, then the Command. */
export function invocationOf(handler: Handler, spec: ActionSpec, commanderArgs: unknown[]): Invocation {
  const command = commanderArgs[commanderArgs.length - 1] as Command;
  const options = commanderArgs[commanderArgs.length - 2] as Record<string, unknown>;
  return { handler, spec, input: { args: commanderArgs.slice(0, -2), options }, command };
}

export type { CommandResult, GlobalOptions, HandlerIO, RunContext };
