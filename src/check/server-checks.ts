/**
 * The checks that need server processes, loaded only for --live so a
 * static check never pays for loading the process machinery. Probe
 * conversations are removed only once every server stopped.
 */
import fs from 'node:fs';
import { makeProbeCwd } from '../acp/protocol.js';
import type { CommandIO } from '../core/io.js';
import { removeProbeSession } from '../profiles/cleanup.js';
import { profileOf } from '../profiles/index.js';
import { serverStartOptions } from '../profiles/server-start.js';
import type { Budget } from '../util/deadline.js';
import { toResult, warn } from './check-result.js';
import { runLive } from './live.js';
import { runRestart } from './restart.js';
import type { ServerCheckInput } from './server-context.js';
import type { CheckOptions, CheckResult } from './types.js';

export async function serverChecks(
  io: CommandIO,
  options: CheckOptions,
  budget: Budget,
): Promise<{ checks: CheckResult[]; serverStartS: number | undefined }> {
  const input: ServerCheckInput = {
    startOptions: (initTimeoutMs) => serverStartOptions(io, { initTimeoutMs }),
    stateDir: io.opts.stateDir,
    env: io.ctx.env,
    signal: io.ctx.signal,
    budget,
    timeoutLabel: options.timeoutLabel,
    prompt: options.prompt,
    model: options.model,
  };
  const cwd = makeProbeCwd(io.ctx.env);
  let sessionId: string | undefined;
  const checks: CheckResult[] = [];
  let serverStartS: number | undefined;
  try {
    const live = await runLive(input, cwd, (id) => (sessionId = id));
    serverStartS = live.serverStartS;
    checks.push(...live.checks);
    if (options.restart && live.liveOk && live.session) checks.push(await runRestart(input, live.session));
  } finally {
    // Every server has stopped here (withServer), so nothing holds the files.
    // The cwd goes first: gemini-cli's cleanup only takes projects whose probe directory is gone.
    fs.rmSync(cwd, { recursive: true, force: true });
    const removed =
      sessionId === undefined || removeProbeSession(profileOf(io.opts), io.opts.stateDir, sessionId, io.ctx.env);
    if (!removed)
      checks.push(
        toResult(
          'cleanup',
          warn(`the probe conversation ${sessionId} could not be removed from ${io.opts.stateDir}/conversations`),
          0,
        ),
      );
  }
  return { checks, serverStartS };
}
