/**
 * The two proofs and what they compare with:
 *  - `restore --prove`: the restored sessions, loaded from the box's own
 *    state dir, compared with the snapshot's replay.json when it has one;
 *  - `backup verify --prove` (and `backup --prove`): the snapshot restored
 *    into a scratch state dir (`inScratchState`), loaded there, compared
 *    with replay.json, and what was replayed recorded for the sessions it
 *    has no record of yet.
 * `sessions export` replays in the same scratch state dir.
 */
import path from 'node:path';
import type { StartOptions } from '../acp/lifecycle.js';
import { errorText } from './error-text.js';
import type { ProveEvent, RestoreEvent } from './events.js';
import { REPLAY_RECORD } from './layout.js';
import { type Manifest, type ManifestSession, readManifest } from './manifest.js';
import { changedOnBox, scratchStateDir } from './prove-scratch.js';
import {
  NOT_COMPARED_NOTE,
  type ProvedSession,
  type ProveInput,
  type ProveReport,
  type ProveRun,
  proveSessions,
  RECORDED_NOW_NOTE,
  type ReplayComparison,
  type ReplayRecorded,
} from './replay-proof.js';
import {
  NewerReplayRecordError,
  type ReplayDigest,
  type ReplayRecord,
  ReplayRecordError,
  readReplayRecord,
  recordedDigest,
  writeReplayRecord,
} from './replay-record.js';
import { runRestore } from './restore.js';
import { withScratchDir } from './scratch-dir.js';

export interface ProveOptions {
  snapshotDir: string;
  /** The box's state dir. */
  stateDir: string;
  /** Server start options for a state dir (the box's command, HOME pointed at it). */
  startFor: (stateDir: string) => StartOptions;
  callTimeoutMs: number;
  signal: AbortSignal;
  fallbackCwd: string;
  /** What the proof (and the restore into its scratch state dir) tells a person as it goes (events.ts). */
  emit: (event: RestoreEvent | ProveEvent) => void;
}

interface LoadedRecord {
  comparison: ReplayComparison;
  record: ReplayRecord | undefined;
  recorded: Map<string, ReplayDigest>;
}

function loadRecord(dir: string, manifest: Manifest): LoadedRecord {
  const file = path.join(dir, REPLAY_RECORD);
  try {
    const record = readReplayRecord(dir, manifest);
    if (!record) return { comparison: { status: 'none', file: null }, record, recorded: new Map() };
    const recorded = new Map(record.sessions.map((s) => [s.id, recordedDigest(s)]));
    return { comparison: { status: 'recorded', file }, record, recorded };
  } catch (err) {
    if (!(err instanceof ReplayRecordError)) throw err;
    const status = err instanceof NewerReplayRecordError ? 'newer' : 'damaged';
    return { comparison: { status, file, problem: err.message }, record: undefined, recorded: new Map() };
  }
}

function report(stateDir: string, run: ProveRun, comparison: ReplayComparison, extra: string[] = []): ProveReport {
  const notes: string[] = [];
  if (comparison.status === 'damaged') notes.push(`${REPLAY_RECORD} cannot be trusted: ${comparison.problem}`);
  if (comparison.status === 'newer') notes.push(`history not compared: ${comparison.problem}`);
  else if (run.sessions.some((s) => s.loaded && s.history === 'not-compared'))
    notes.push(comparison.written ? RECORDED_NOW_NOTE : NOT_COMPARED_NOTE);
  return {
    ok: run.sessions.every((s) => s.ok) && comparison.status !== 'damaged' && extra.length === 0,
    stateDir,
    replay: comparison,
    server: run.server,
    notes: [...notes, ...extra],
    sessions: run.sessions,
  };
}

function proveInput(opts: ProveOptions, stateDir: string, sessions: ManifestSession[], recorded: LoadedRecord) {
  return {
    sessions,
    stateDir,
    start: opts.startFor(stateDir),
    callTimeoutMs: opts.callTimeoutMs,
    signal: opts.signal,
    fallbackCwd: opts.fallbackCwd,
    recorded: recorded.recorded,
  } satisfies ProveInput;
}

const EMPTY_RUN: ProveRun = { sessions: [], digests: new Map(), server: null };

/** `restore --prove`: a fresh server on the box's own state dir loads every restored session (`ids`). */
export async function proveRestored(opts: ProveOptions, ids: string[]): Promise<ProveReport> {
  const manifest = readManifest(opts.snapshotDir);
  const sessions = manifest.sessions.filter((s) => ids.includes(s.id));
  const recorded = loadRecord(opts.snapshotDir, manifest);
  const run =
    sessions.length === 0 ? EMPTY_RUN : await proveSessions(proveInput(opts, opts.stateDir, sessions, recorded));
  return report(opts.stateDir, run, recorded.comparison);
}

/** What a scratch state dir is made from: the snapshot (all its sessions, or `sessionIds`), the box's state dir, and where it goes. */
export interface ScratchOptions {
  snapshotDir: string;
  stateDir: string;
  signal: AbortSignal;
  emit: ProveOptions['emit'];
  tmpRoot: string;
  sessionIds?: string[];
}

export interface ScratchRun<T> {
  result: T;
  /** The box's settings/token files that changed while the scratch server ran (they must not). */
  changed: string[];
}

/**
 * Runs `fn` on a scratch state dir holding the snapshot's sessions (all, or
 * `sessionIds`), 0600 copies of the box's settings and token, inside a 0700
 * temporary dir removed on every path; then checks the box's files.
 */
export async function inScratchState<T>(
  opts: ScratchOptions,
  fn: (stateDir: string, restored: ManifestSession[], failed: Array<{ id: string; reason: string }>) => Promise<T>,
): Promise<ScratchRun<T>> {
  return withScratchDir(opts.tmpRoot, 'agyctl-prove-', async (root) => {
    const scratch = scratchStateDir(root, opts.stateDir);
    let result: T;
    try {
      const restored = await runRestore(
        { stateDir: scratch.stateDir, sessionIds: opts.sessionIds ?? [], force: false },
        { snapshotDir: opts.snapshotDir, signal: opts.signal, emit: opts.emit },
      );
      const ok = new Set(restored.sessions.filter((s) => s.restored).map((s) => s.id));
      const sessions = readManifest(opts.snapshotDir).sessions.filter((s) => ok.has(s.id));
      const failed = restored.sessions
        .filter((s) => !s.restored)
        .map((s) => ({ id: s.id, reason: s.reason ?? 'not restored' }));
      result = await fn(scratch.stateDir, sessions, failed);
    } catch (err) {
      // A server that wrote the box's files is reported on every path, also when the run failed.
      const changed = changedOnBox(scratch);
      if (changed.length > 0)
        opts.emit({ type: 'credentials-changed', note: credentialsChanged(changed, opts.stateDir) });
      throw err;
    }
    return { result, changed: changedOnBox(scratch) };
  });
}

export function credentialsChanged(changed: string[], stateDir: string): string {
  return `the box's ${changed.join(' and ')} in ${stateDir} changed while the scratch server ran; it was given private copies, so something else wrote them (a server that ignores HOME, or the box's own server refreshing its token): check them`;
}

/** `backup verify --prove`: load every session from a scratch copy (under `tmpRoot`), compare with replay.json, record what it lacks. */
export async function proveInScratch(opts: ProveOptions, tmpRoot: string): Promise<ProveReport & { scratch: true }> {
  const manifest = readManifest(opts.snapshotDir);
  const recorded = loadRecord(opts.snapshotDir, manifest);
  const { result, changed } = await inScratchState({ ...opts, tmpRoot }, async (stateDir, sessions, failed) => {
    const run = sessions.length === 0 ? EMPTY_RUN : await proveSessions(proveInput(opts, stateDir, sessions, recorded));
    for (const f of failed) run.sessions.push(notRestored(f.id, f.reason));
    return { stateDir, run };
  });
  const extra = changed.length > 0 ? [credentialsChanged(changed, opts.stateDir)] : [];
  const comparison = { ...recorded.comparison, ...recordNew(opts, manifest, recorded, result.run) };
  return { ...report(result.stateDir, result.run, comparison, extra), scratch: true, credentials: { changed } };
}

function notRestored(id: string, reason: string): ProvedSession {
  return {
    id,
    ok: false,
    loaded: false,
    replayed: null,
    history: 'not-compared',
    expectedMessages: null,
    problem: `could not be restored into the scratch state dir: ${reason}`,
  };
}

/**
 * Records the sessions that passed without a record. A damaged record is
 * never overwritten (the user deletes it to record anew), and one of a
 * newer agyctl is left as it is.
 */
function recordNew(opts: ProveOptions, manifest: Manifest, loaded: LoadedRecord, run: ProveRun): ReplayRecorded {
  if (loaded.comparison.status === 'damaged' || loaded.comparison.status === 'newer') return {};
  const added = run.sessions
    .filter((s) => s.ok && s.history === 'not-compared' && run.digests.has(s.id))
    .map((s) => ({
      id: s.id,
      db: manifest.sessions.find((m) => m.id === s.id)!.sha256,
      digest: run.digests.get(s.id)!,
    }));
  if (added.length === 0) return { written: null };
  try {
    const record = writeReplayRecord(opts.snapshotDir, loaded.record, added, run.server);
    return { written: { file: path.join(opts.snapshotDir, REPLAY_RECORD), sessions: record.sessions.length } };
  } catch (err) {
    const why = `replay not recorded in ${opts.snapshotDir}: ${errorText(err)}`;
    opts.emit({ type: 'replay-not-recorded', why });
    return { written: null, notWritten: why };
  }
}
