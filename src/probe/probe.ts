/** The probe use case: spawn, initialize, describe, stop. Proves the stack end to end. */

import { withServer } from '../acp/lifecycle.js';
import { describeInit, type InitDescription } from '../acp/protocol.js';
import type { CommandIO } from '../core/io.js';
import { adoptDetectedProfile } from '../profiles/adopt.js';
import { serverStartOptions } from '../profiles/server-start.js';

/** `agyctl probe`'s options, checked by cli/commands/probe/handler.ts: which of its three runs, and what that run takes. */
export type ProbeOptions =
  | { run: 'server'; timeoutMs: number }
  | { run: 'sign-in'; timeoutMs: number; method: string | undefined; fakeDisplay: boolean }
  | { run: 'assumptions'; timeoutMs: number };

export interface ProbeReport extends InitDescription {
  server: string;
  pid: number;
  /** The server profile in use after initialize (a guess corrected by agentInfo.name). */
  profile: string;
  timings: { spawnToInitializeMs: number };
}

export async function runProbe(io: CommandIO, timeoutMs: number): Promise<ProbeReport> {
  const options = serverStartOptions(io, { initTimeoutMs: timeoutMs });
  return withServer(options, async ({ server, init, initMs }) => ({
    server: options.command.display,
    pid: server.pid,
    profile: adoptDetectedProfile(io, init).profile.id,
    ...describeInit(init),
    timings: { spawnToInitializeMs: initMs },
  }));
}
