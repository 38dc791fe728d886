/**
 * A guessed profile yields to what the server says it is (initialize's
 * agentInfo.name); an explicit --profile / AGYCTL_PROFILE does not, but a
 * mismatch is worth a warning (a ServerNote the CLI words). Switching moves the default state dir with
 * the profile, never a --state-dir the user gave. The caller's target is
 * left as it was: the adoption carries a new one to use from then on.
 */

import type { InitializeResult } from '../acp/protocol.js';
import type { CommandIO, ServerTarget } from '../core/io.js';
import { detectProfile, getProfile, profileOf } from './index.js';
import type { ServerProfile } from './types.js';

export interface Adoption {
  profile: ServerProfile;
  /** The profile changed because of what the server reported. */
  switched: boolean;
  /** The target to use from now on (the caller's own when nothing switched). */
  target: ServerTarget;
}

export function adoptDetectedProfile(io: CommandIO, init: InitializeResult): Adoption {
  const current = profileOf(io.opts);
  const name = init.agentInfo?.name;
  const detected = detectProfile(name);
  if (!detected || detected === current.id) return { profile: current, switched: false, target: io.opts };
  if (io.opts.profileSource === 'flag' || io.opts.profileSource === 'env') {
    io.out.server({ about: 'profile-kept', agentName: name, detected, asked: current.id });
    return { profile: current, switched: false, target: io.opts };
  }
  const next = getProfile(detected);
  const target: ServerTarget = {
    ...io.opts,
    profile: next.id,
    profileSource: 'detected',
    ...(io.opts.stateDirExplicit ? {} : { stateDir: next.defaultStateDir(io.ctx.env) }),
  };
  io.out.server({
    about: 'profile-followed',
    agentName: name,
    title: next.title,
    profile: next.id,
    stateDir: target.stateDir,
  });
  return { profile: next, switched: true, target };
}
