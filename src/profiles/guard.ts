/**
 * Commands that do not apply to a profile say so up front (exit 2) instead
 * of failing halfway; and commands that start a server refuse a state dir
 * the server cannot be pointed at, before anything is touched.
 */
import path from 'node:path';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { profileOf } from './index.js';
import type { ServerProfile } from './types.js';

export function assertCommandApplies(io: CommandIO, command: string): void {
  const profile = profileOf(io.opts);
  const entry = profile.unsupported[command];
  if (entry === undefined) return;
  throw usageError(`agyctl ${command} does not apply to the ${profile.id} profile: ${entry.why}.`, entry.instead);
}

/**
 * The server has no state-dir flag: it derives its state dir from HOME
 * (gemini-cli: GEMINI_CLI_HOME). A state dir without that shape cannot be
 * given to it, and a server on its default state dir would act on another
 * box state (logout would remove $HOME's token). So: refuse, exit 2.
 */
export function assertServerCanUse(profile: ServerProfile, stateDir: string): void {
  if (profile.canSteer(stateDir)) return;
  const variable = profile.homeVariable;
  const home = path.join(path.sep, 'home', 'USER');
  throw new AgyError(
    EXIT.usage,
    'state-dir-not-steerable',
    `The state dir ${stateDir} does not end in ${profile.stateDirShape}, so the server cannot be pointed at it (it finds its state from ${variable}); nothing was changed.`,
    {
      hint: `give the server's own state dir, shaped <home>/${profile.stateDirShape} (e.g. --state-dir ${path.join(home, profile.stateDirShape)}: the server then runs with ${variable}=${home})`,
    },
  );
}
