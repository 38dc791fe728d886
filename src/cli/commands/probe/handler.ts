/** `agyctl probe [--sign-in]`: flags -> src/probe (probe.ts, or sign-in.ts through sign-in-handler.ts), printed with render.ts. */

import { EXIT, usageError } from '../../../core/errors.js';
import type { HandlerArgs } from '../../action.js';
import type { CommandResult, HandlerIO } from '../../context.js';

/** `agyctl probe`'s own flags, as commander produces them (register.ts). */
export interface ProbeFlags {
  /** Has a default ('60s'). */
  timeout: string;
  signIn?: boolean;
  assumptions?: boolean;
  method?: string;
  /** `--no-fake-display` makes it false. */
  fakeDisplay: boolean;
}

export async function probeCommand(io: HandlerIO, { options }: HandlerArgs<ProbeFlags>): Promise<CommandResult> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const timeoutMs = parseDurationOption('--timeout', options.timeout);
  if (options.assumptions) {
    if (options.signIn || options.method !== undefined)
      throw usageError('--assumptions runs on its own.', 'drop --sign-in and --method, or run them separately');
    const { runAssumptionsProbe } = await import('./assumptions-handler.js');
    return runAssumptionsProbe(io, timeoutMs);
  }
  if (options.signIn) {
    const { runSignInProbe } = await import('./sign-in-handler.js');
    return runSignInProbe(io, { timeoutMs, method: options.method, fakeDisplay: options.fakeDisplay });
  }

  if (options.method !== undefined) {
    throw usageError('--method only matters with --sign-in.', 'add --sign-in, or drop --method');
  }
  const { runProbe } = await import('../../../probe/probe.js');
  const report = await runProbe(io, timeoutMs);
  if (!io.opts.json) {
    const { renderProbe } = await import('./render.js');
    for (const line of renderProbe(report)) io.out.print(line);
  }
  return { exit: EXIT.ok, data: { probe: report } };
}
