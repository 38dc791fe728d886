/** `agyctl probe [--sign-in]`: flags -> src/probe (probe.ts, or sign-in.ts through sign-in-handler.ts), printed with render.ts. */

import { EXIT, usageError } from '../../../core/errors.js';
import type { ProbeOptions } from '../../../probe/probe.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';

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

async function probeOptions(flags: ProbeFlags): Promise<ProbeOptions> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const timeoutMs = parseDurationOption('--timeout', flags.timeout);
  if (flags.assumptions) {
    if (flags.signIn || flags.method !== undefined)
      throw usageError('--assumptions runs on its own.', 'drop --sign-in and --method, or run them separately');
    return { run: 'assumptions', timeoutMs };
  }
  if (flags.signIn) return { run: 'sign-in', timeoutMs, method: flags.method, fakeDisplay: flags.fakeDisplay };
  if (flags.method !== undefined)
    throw usageError('--method only matters with --sign-in.', 'add --sign-in, or drop --method');
  return { run: 'server', timeoutMs };
}

export async function probeCommand(io: HandlerIO, { options: flags }: HandlerArgs<ProbeFlags>): Promise<CommandResult> {
  const options = await probeOptions(flags);
  if (options.run === 'assumptions')
    return (await import('./assumptions-handler.js')).runAssumptionsProbe(io, options.timeoutMs);
  if (options.run === 'sign-in') return (await import('./sign-in-handler.js')).runSignInProbe(io, options);
  const { runProbe } = await import('../../../probe/probe.js');
  const report = await runProbe(io, options.timeoutMs);
  if (!io.opts.json) {
    const { renderProbe } = await import('./render.js');
    for (const line of renderProbe(report)) io.out.print(line);
  }
  return { exit: EXIT.ok, data: { probe: report } };
}
