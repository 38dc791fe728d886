/** What a command handler runs with: the use cases' CommandIO (src/core/io.ts) plus the presentation options and the terminal Output. */
import type { CommandIO as CoreIO, ServerTarget } from '../core/io.js';
import type { Output } from './terminal/output.js';

export type { CommandResult, RunContext, TtyReadable, TtyWritable } from '../core/io.js';

export interface GlobalOptions extends ServerTarget {
  json: boolean;
  color: boolean;
  verbose: boolean;
  trace: string | undefined;
}

export interface HandlerIO extends CoreIO {
  opts: GlobalOptions;
  out: Output;
}
