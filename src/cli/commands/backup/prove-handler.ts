/**
 * The handler side of `--prove`: server start options from the global
 * options (the box's server command, settings and credentials), then
 * prove.ts against the live state dir (`restore --prove`) or a scratch copy
 * (`backup verify --prove`).
 */

import { type ManifestSession, readManifest } from '../../../backup/manifest.js';
import { type ProveReport, proveSessions } from '../../../backup/prove.js';
import { scratchStateDir } from '../../../backup/prove-scratch.js';
import { runRestore } from '../../../backup/restore.js';
import { withScratchDir } from '../../../backup/scratch-dir.js';
import { usageError } from '../../../core/errors.js';
import type { CommandIO } from '../../../core/io.js';
import { tempRoot } from '../../../core/paths.js';
import { serverStartOptions } from '../../../profiles/server-start.js';
import { parseDurationOption } from '../../parse-options.js';

type Opts = Record<string, unknown>;

const DEFAULT_CALL_TIMEOUT = '60s';

function callTimeoutMs(options: Opts): number {
  return parseDurationOption(
    '--prove-timeout',
    typeof options.proveTimeout === 'string' ? options.proveTimeout : DEFAULT_CALL_TIMEOUT,
  );
}

function assertAntigravity(io: CommandIO): void {
  if (io.opts.profile && io.opts.profile !== 'antigravity')
    throw usageError(
      `--prove loads sessions in antigravity-acp; the ${io.opts.profile} profile keeps no such conversations.`,
    );
}

/** `restore --prove`: a fresh server on the box's own state dir loads every restored session. */
export async function proveRestored(
  io: CommandIO,
  snapshotDir: string,
  ids: string[],
  options: Opts,
): Promise<ProveReport> {
  assertAntigravity(io);
  const sessions = readManifest(snapshotDir).sessions.filter((s) => ids.includes(s.id));
  return prove(io, io.opts.stateDir, sessions, options);
}

/** `backup verify --prove`: the snapshot restored into a scratch state dir that borrows the box's settings and token (symlinks). */
export async function proveInScratch(io: CommandIO, snapshotDir: string, options: Opts): Promise<ProveReport> {
  assertAntigravity(io);
  return withScratchDir(tempRoot(io.ctx.env), 'agyctl-prove-', async (root) => {
    const stateDir = scratchStateDir(root, io.opts.stateDir);
    const restored = await runRestore({
      snapshotDir,
      stateDir,
      sessionIds: [],
      force: false,
      signal: io.ctx.signal,
      out: io.out,
    });
    const ok = new Set(restored.sessions.filter((s) => s.restored).map((s) => s.id));
    const sessions = readManifest(snapshotDir).sessions;
    const report = await prove(
      io,
      stateDir,
      sessions.filter((s) => ok.has(s.id)),
      options,
    );
    for (const s of restored.sessions.filter((r) => !r.restored)) {
      report.sessions.push({
        id: s.id,
        ok: false,
        loaded: false,
        expectedMessages: 0,
        replayed: null,
        problem: `could not be restored into the scratch state dir: ${s.reason}`,
      });
      report.ok = false;
    }
    return { ...report, scratch: true };
  });
}

async function prove(
  io: CommandIO,
  stateDir: string,
  sessions: ManifestSession[],
  options: Opts,
): Promise<ProveReport> {
  if (sessions.length === 0) return { ok: true, stateDir, sessions: [] };
  const start = serverStartOptions({ ...io, opts: { ...io.opts, stateDir } });
  return proveSessions({
    sessions,
    stateDir,
    start,
    callTimeoutMs: callTimeoutMs(options),
    signal: io.ctx.signal,
    fallbackCwd: io.ctx.cwd,
  });
}
