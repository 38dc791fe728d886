/** What the proof of a switched version runs against: its command, and the state dir whose credentials `check --live` tries. */

import path from 'node:path';
import type { CommandIO } from '../core/io.js';
import { profileOf } from '../profiles/index.js';
import { readMeta } from '../profiles/installed-server.js';
import { type ProofTarget, serverLine, tokenPresent } from './prove.js';
import type { Store } from './store.js';

export interface ProofSetup {
  /** false: --no-prove. */
  prove: boolean;
  timeoutMs: number;
}

/**
 * Root proves with the --state-dir given (its owner runs the checks), or
 * initialize alone without one; a user proves with their own state dir.
 */
export function proofTarget(io: CommandIO, setup: ProofSetup, dir: string, store: Store): ProofTarget {
  const version = path.basename(dir);
  const meta = readMeta(store.dir, version);
  const file = path.resolve(dir, meta?.cmd ?? '');
  const asRoot = (process.getuid?.() ?? 0) === 0;
  const stateDir = asRoot && !io.opts.stateDirExplicit ? undefined : io.opts.stateDir;
  const signedIn = stateDir !== undefined && tokenPresent(profileOf(io.opts).files(stateDir).token);
  return {
    server: serverLine(file, meta?.args ?? []),
    stateDir: io.opts.stateDirExplicit ? stateDir : undefined,
    signedIn,
    env: io.ctx.env,
    signal: io.ctx.signal,
    timeoutMs: setup.timeoutMs,
  };
}
