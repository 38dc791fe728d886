/** `probe --assumptions`: the command's wiring around src/probe/assumptions.ts (server start options, output). */
import { EXIT, usageError } from '../../../core/errors.js';
import { tempRoot } from '../../../core/paths.js';
import { probeAssumptions } from '../../../probe/assumptions.js';
import { profileOf } from '../../../profiles/index.js';
import { serverStartOptions } from '../../../profiles/server-start.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { renderAssumptions } from './assumptions-render.js';

export async function runAssumptionsProbe(io: HandlerIO, timeoutMs: number): Promise<CommandResult> {
  if (profileOf(io.opts).id !== 'antigravity')
    throw usageError(
      `--assumptions audits what agyctl assumes about antigravity-acp; the ${profileOf(io.opts).id} profile keeps another layout.`,
      'run it with --profile antigravity against an antigravity-acp server',
    );
  const report = await probeAssumptions({
    stateDir: io.opts.stateDir,
    now: Date.now(),
    callTimeoutMs: timeoutMs,
    scratchRoot: tempRoot(io.ctx.env),
    signal: io.ctx.signal,
    startOptions: (stateDir, onStdoutNoise) => {
      const options = serverStartOptions({ ...io, opts: { ...io.opts, stateDir } }, { initTimeoutMs: timeoutMs });
      const shown = options.onOutputLine;
      options.onOutputLine = (line, stream) => {
        if (stream === 'stdout') onStdoutNoise(line);
        shown?.(line, stream);
      };
      return options;
    },
  });
  if (!io.opts.json) for (const line of renderAssumptions(report)) io.out.print(line);
  if (!report.stateDir.unchanged)
    io.out.warn(`the state dir ${report.stateDir.path} changed while the probe ran (another process wrote to it?)`);
  return { exit: EXIT.ok, data: { assumptions: report } };
}
