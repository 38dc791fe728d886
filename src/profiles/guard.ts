/** Commands that do not apply to a profile say so up front (exit 2) instead of failing halfway. */
import type { CommandIO } from '../cli/context.js';
import { usageError } from '../errors.js';
import { profileOf } from './index.js';

export function assertCommandApplies(io: CommandIO, command: string): void {
  const profile = profileOf(io.opts);
  const why = profile.unsupported[command];
  if (why === undefined) return;
  throw usageError(`agyctl ${command} does not apply to the ${profile.id} profile: ${why}.`, `back up ${io.opts.stateDir} with your usual file backup; drop --profile ${profile.id} (or AGYCTL_PROFILE) for an antigravity-acp server`);
}
