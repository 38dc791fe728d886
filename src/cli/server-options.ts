/** How commands turn the global options into a server start. */
import { resolveServerCommand } from '../acp/resolve.js';
import type { StartOptions } from '../acp/lifecycle.js';
import type { CommandIO } from './context.js';
import { agyctlVersion } from './version.js';
import { serverHomeFor } from '../paths.js';

export const DEFAULT_INIT_TIMEOUT_MS = 60_000;

let warned = false;
/** The server has no state-dir flag: only a `<home>/.gemini/antigravity-acp` path can be steered (through HOME). */
function warnStateDirOnce(io: CommandIO): void {
  if (warned) return;
  warned = true;
  io.out.warn(`--state-dir ${io.opts.stateDir} does not end in .gemini/antigravity-acp, so the server cannot be pointed at it; the server will use $HOME/.gemini/antigravity-acp`);
}

export interface ServerStartExtras {
  env?: NodeJS.ProcessEnv;
  initTimeoutMs?: number;
  onOutputLine?: StartOptions['onOutputLine'];
}

export function serverStartOptions(io: CommandIO, extras: ServerStartExtras = {}): StartOptions {
  const env = extras.env ?? io.ctx.env;
  if (!serverHomeFor(io.opts.stateDir)) warnStateDirOnce(io);
  const options: StartOptions = {
    command: resolveServerCommand(io.opts.server, env, io.ctx.cwd),
    env,
    stateDir: io.opts.stateDir,
    cwd: io.ctx.cwd,
    tracer: io.tracer,
    signal: io.ctx.signal,
    initTimeoutMs: extras.initTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS,
    clientVersion: agyctlVersion(),
  };
  const onLine = extras.onOutputLine;
  options.onOutputLine = (line, stream) => {
    io.out.verbose(`[server ${stream}] ${line}`);
    onLine?.(line, stream);
  };
  return options;
}
