/** The check command's flag handling and output, kept out of the command file so --help stays light. */

import { callersMetricsFile } from '../../../check/metrics-target.js';
import { type CheckOptions, runCheck } from '../../../check/run.js';
import { EXIT_FOR } from '../../../check/status.js';
import { usageError } from '../../../core/errors.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { parseDurationOption } from '../../parse-options.js';
import { publicCheck, renderChecks } from './render.js';

/** `agyctl check`'s own flags, as commander produces them (register.ts). */
export interface CheckFlags {
  live?: boolean;
  restart?: boolean;
  prompt?: boolean;
  model?: string;
  /** Has a default ('60s'). */
  timeout: string;
  prometheus?: string;
}

/** The flags checked: the one options type runCheck takes. */
export function checkOptions(io: HandlerIO, flags: CheckFlags): CheckOptions {
  const timeoutLabel = flags.timeout;
  const timeoutMs = parseDurationOption('--timeout', timeoutLabel);
  const restart = flags.restart === true;
  const prompt = flags.prompt === true;
  const model = flags.model;
  if (model !== undefined && !/^[A-Za-z0-9._:/-]+$/.test(model))
    throw usageError(`--model must be a model id like gemini-3.8-flash-low (got ${JSON.stringify(model)}).`);
  if (model !== undefined && !restart && !prompt)
    throw usageError(
      '--model only matters with --restart or --prompt.',
      'add --restart (or --prompt), or drop --model',
    );
  const prometheus = callersMetricsFile(flags.prometheus, io.ctx.cwd, io.ctx.env);
  return {
    live: flags.live === true || restart || prompt,
    restart,
    prompt,
    model,
    timeoutMs,
    timeoutLabel,
    prometheus,
  };
}

export async function runCheckCommand(io: HandlerIO, options: CheckOptions): Promise<CommandResult> {
  const report = await runCheck(io, options);
  if (!io.opts.json) for (const line of renderChecks(report.checks, report.status, io.out.c)) io.out.print(line);
  return {
    exit: EXIT_FOR[report.status],
    data: {
      status: report.status,
      checks: report.checks.map(publicCheck),
      ...(report.token ? { token: report.token } : {}),
      durationMs: report.durationMs,
      ...(options.prometheus ? { prometheus: options.prometheus } : {}),
    },
  };
}
