/**
 * The glue between commander and a command's handler, and what a handler
 * runs with (HandlerIO): main assembles the global options, the Output and
 * the tracer, runs the handler, and maps its result. Command files use `action(handler)` and never touch exit
 * codes or process state themselves.
 */
import type { Command } from 'commander';
import type { CommandResult, CommandIO as CoreIO, RunContext, ServerTarget } from '../core/io.js';
import type { Output } from './terminal/output.js';

export type { CommandResult, RunContext, TtyReadable, TtyWritable } from '../core/io.js';

export interface GlobalOptions extends ServerTarget {
  json: boolean;
  color: boolean;
  verbose: boolean;
  trace: string | undefined;
}

/** What a command handler runs with: the use cases' CommandIO plus the presentation options and the terminal Output. */
export interface HandlerIO extends CoreIO {
  opts: GlobalOptions;
  out: Output;
}

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

/** What root keeps of a command it runs again as the state dir's owner (as-owner.ts); by default neither. */
export interface OwnerSide {
  /** The child reads root's stdin (a login's pasted address); otherwise it gets an empty one. */
  withStdin?: boolean;
  /** The command's --prometheus FILE, absolute and checked: root writes it from the text the child sends. */
  prometheus?: string | undefined;
}

export interface ActionSpec<O = Record<string, unknown>> {
  /** Streaming commands print NDJSON events in --json mode instead of one document. */
  streaming?: boolean;
  /**
   * The command reads an existing state dir (check, sessions, backup): a --state-dir or AGYCTL_STATE_DIR that
   * is missing or not a directory is refused before it runs, with the same exit and message everywhere.
   */
  readsStateDir?: boolean;
  /** Root on a user's state dir: what root's side keeps of this run (invoke.ts), from the command's own flags. */
  asOwner?: (input: HandlerArgs<O>, ctx: RunContext) => OwnerSide | Promise<OwnerSide>;
}

export type ActionFactory = <O = Record<string, unknown>>(
  handler: Handler<O>,
  spec?: ActionSpec<O>,
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

/** commander's argParser for a repeatable option (`--session A --session B` -> ['A', 'B']). */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
