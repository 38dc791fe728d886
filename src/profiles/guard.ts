/** Commands that do not apply to a profile say so up front (exit 2) instead of failing halfway. */
import type { CommandIO } from '../cli/context.js';
import { usageError } from '../errors.js';
import { profileOf } from './index.js';

export function assertCommandApplies(io: CommandIO, command: string): void {
  const profile = profileOf(io.opts);
  const entry = profile.unsupported[command];
  if (entry === undefined) return;
  throw usageError(`agyctl ${command} does not apply to the ${profile.id} profile: ${entry.why}.`, entry.instead);
}
