/**
 * `agyctl restore SNAPSHOT`: put conversations back from a snapshot, with
 * the server stopped. Refuses (exit 6) while any process holds a target
 * database or its WAL open (/proc); `--force` overrides only that finding,
 * never a failed SQLite lock probe.
 */
import path from 'node:path';
import { AgyError, EXIT, InterruptedError, usageError } from '../core/errors.js';
import { conversationFiles, stateFiles } from '../core/paths.js';
import { sha256File } from '../util/os/file-hash.js';
import { assertNotSymlink, mkdirPrivate, sweepPrivateDirs } from '../util/os/safe-fs.js';
import { findServersFor, holders } from '../util/procfs.js';
import { brainDir, restoreBrain, scanBrain } from './brain.js';
import { errorText } from './error-text.js';
import type { RestoreEvent } from './events.js';
import { snapshotName } from './layout.js';
import { ManifestError, type ManifestSession, manifestAgyError, readManifest, sessionFiles } from './manifest.js';
import { assertConversationNotLinked, LockedError, OpenElsewhereError, restoreOne } from './restore-one.js';

/**
 * What a restore reads, checked once from `agyctl restore`'s flags (cli/commands/restore/handler.ts);
 * what acts around it (where the snapshot comes from, --dry-run, --prove) stays with the handler.
 */
export interface RestoreOptions {
  /** The state dir restored into (--state-dir). */
  stateDir: string;
  /** --session: only these conversations (none: all the snapshot holds). */
  sessionIds: string[];
  force: boolean;
}

/** What a restore adds to its options: the snapshot directory it reads (an archive is unpacked into one first), its stop signal and events. */
export interface RestoreRun {
  snapshotDir: string;
  signal: AbortSignal;
  emit: (event: RestoreEvent) => void;
}

type Restoring = RestoreOptions & RestoreRun;

export interface RestoredSession {
  id: string;
  restored: boolean;
  preRestore: string | null;
  /** The database there already held the snapshot's content, so no pre-restore copy was made. */
  unchanged: boolean;
  /** Files put back under brain/<id>/ (0 when the snapshot has none, or when brainUnchanged: the current brain directory is left alone). */
  brainFiles: number;
  /** brain/<id>/ held the snapshot's files already, byte for byte: left as it is, with no pre-restore copy. */
  brainUnchanged: boolean;
  /** The brain directory that was there, kept beside it; null when there was none or it was left alone. */
  brainPreRestore: string | null;
  reason?: string;
}

export interface RestoreReport {
  snapshot: string;
  stateDir: string;
  forced: boolean;
  sessions: RestoredSession[];
}

export async function runRestore(options: RestoreOptions, run: RestoreRun): Promise<RestoreReport> {
  const opts: Restoring = { ...options, ...run };
  const chosen = selectSessions(opts.snapshotDir, opts.sessionIds);
  checkSnapshotFiles(opts.snapshotDir, chosen);
  const targets = (id: string): string[] => [
    conversationFiles(opts.stateDir, id).db,
    conversationFiles(opts.stateDir, id).wal,
    ...brainFilesNow(opts.stateDir, id),
  ];
  refuseIfOpen(
    chosen.flatMap((s) => targets(s.id)),
    opts,
  );
  refuseLinks(opts.stateDir, chosen);
  mkdirPrivate(stateFiles(opts.stateDir).conversations);
  for (const dir of [stateFiles(opts.stateDir).conversations, path.join(opts.stateDir, 'brain')])
    for (const name of sweepPrivateDirs(dir, 'restore')) opts.emit({ type: 'leftover-removed', name });
  const sessions: RestoredSession[] = [];
  for (const session of chosen) {
    await new Promise((resolve) => setImmediate(resolve));
    if (opts.signal.aborted) throw new InterruptedError();
    const recheck = (): void => (opts.force ? undefined : refuseIfOpen(targets(session.id), opts));
    // Set once the database is back: a failure after that must say so, never "nothing was changed".
    let dbRestored: { preRestore: string | null; unchanged: boolean } | undefined;
    try {
      dbRestored = restoreOne({
        stateDir: opts.stateDir,
        snapshotDir: opts.snapshotDir,
        session,
        recheck,
        force: opts.force,
      });
      const stamp = snapshotName(new Date());
      const brainRestored = restoreBrain(opts.snapshotDir, opts.stateDir, session, stamp);
      sessions.push({
        id: session.id,
        restored: true,
        preRestore: dbRestored.preRestore,
        unchanged: dbRestored.unchanged,
        brainFiles: brainRestored.unchanged ? 0 : (session.brain?.files.length ?? 0),
        brainUnchanged: brainRestored.unchanged,
        brainPreRestore: brainRestored.preRestore,
      });
    } catch (err) {
      if (err instanceof AgyError && !dbRestored) throw err;
      const reason = dbRestored ? halfRestored(dbRestored.preRestore, err) : explain(err);
      opts.emit({ type: 'session-not-restored', id: session.id, reason });
      sessions.push({
        id: session.id,
        restored: false,
        preRestore: dbRestored?.preRestore ?? null,
        unchanged: false,
        brainFiles: 0,
        brainUnchanged: false,
        brainPreRestore: null,
        reason,
      });
    }
  }
  return { snapshot: opts.snapshotDir, stateDir: opts.stateDir, forced: opts.force, sessions };
}

/** The database is back but its brain files are not: the reason says both. */
function halfRestored(preRestore: string | null, err: unknown): string {
  const why = err instanceof AgyError ? err.message.replace(/\s*Nothing was changed\.$/, '') : explain(err);
  const kept = preRestore ? ` (the previous one kept as ${preRestore})` : '';
  return `its database was restored${kept}, but not its brain files: ${why}`;
}

/** The sessions of the snapshot in `snapshotDir` that --session names (none: all it holds). */
export function selectSessions(snapshotDir: string, sessionIds: string[]): ManifestSession[] {
  let all: ManifestSession[];
  try {
    all = readManifest(snapshotDir).sessions;
  } catch (err) {
    if (err instanceof ManifestError) throw manifestAgyError(err, snapshotDir);
    throw err;
  }
  if (sessionIds.length === 0) return all;
  const wanted = [...new Set(sessionIds)];
  const missing = wanted.filter((id) => !all.some((s) => s.id === id));
  if (missing.length > 0)
    throw usageError(
      `Snapshot ${snapshotDir} has no session ${missing.join(', ')}.`,
      `its sessions: ${all.map((s) => s.id).join(', ') || 'none'}`,
    );
  return all.filter((s) => wanted.includes(s.id));
}

/** A damaged snapshot is caught before anything in the state dir changes. */
function checkSnapshotFiles(dir: string, sessions: ManifestSession[]): void {
  const bad = mismatchedFiles(dir, sessions);
  if (bad.length > 0) {
    throw new AgyError(
      EXIT.findings,
      'snapshot-damaged',
      `The snapshot is damaged; nothing was restored: ${bad.join('; ')}.`,
      { hint: `run \`agyctl backup verify ${dir}\`, or restore from another snapshot` },
    );
  }
}

/** Snapshot files (databases, .meta, brain files) that no longer match their manifest hashes. */
export function mismatchedFiles(dir: string, sessions: ManifestSession[]): string[] {
  const bad: string[] = [];
  for (const s of sessions) {
    for (const f of sessionFiles(s)) {
      try {
        if (sha256File(path.join(dir, ...f.name.split('/'))) !== f.sha256)
          bad.push(`${f.name} does not match its manifest hash`);
      } catch (err) {
        bad.push(`${f.name}: ${errorText(err)}`);
      }
    }
  }
  return bad;
}

/** Before anything changes: a linked conversations dir or conversation file is refused (exit 2, `unsafe-symlink`). */
function refuseLinks(stateDir: string, sessions: ManifestSession[]): void {
  assertNotSymlink(stateFiles(stateDir).conversations, 'the conversations directory');
  for (const s of sessions) assertConversationNotLinked(conversationFiles(stateDir, s.id));
  if (sessions.some((s) => (s.brain?.files.length ?? 0) > 0)) {
    assertNotSymlink(path.join(stateDir, 'brain'), 'the brain directory');
    for (const s of sessions)
      if (s.brain?.files.length) assertNotSymlink(brainDir(stateDir, s.id), "a session's brain directory");
  }
}

/** The regular files in brain/<id>/ now (a process holding one open holds the session). */
export function brainFilesNow(stateDir: string, id: string): string[] {
  try {
    return (scanBrain(stateDir, id)?.found ?? []).map((f) => f.abs);
  } catch {
    return []; // over the size limits: the directory is moved aside whole, not read
  }
}

function refuseIfOpen(paths: string[], opts: Restoring): void {
  const open = [...holders(paths)].filter(([, pids]) => pids.length > 0);
  if (open.length === 0) return;
  const list = open.map(([p, pids]) => `${path.basename(p)} (pid ${pids.join(', ')})`).join(', ');
  if (opts.force) {
    opts.emit({ type: 'forced-while-open', files: list });
    return;
  }
  const servers = findServersFor(opts.stateDir).map((p) => p.pid);
  throw new AgyError(EXIT.findings, 'restore-refused', `Refusing to restore: a running process has ${list} open.`, {
    hint: `stop the server first${servers.length > 0 ? ` (server pid ${servers.join(', ')})` : ''}; --force skips this check, never the SQLite lock probe`,
    details: { openBy: Object.fromEntries(open.map(([p, pids]) => [p, pids])) },
  });
}

function explain(err: unknown): string {
  if (err instanceof LockedError) return `${err.message}; stop the server first (--force does not override this)`;
  if (err instanceof OpenElsewhereError)
    return `${err.message}; stop the server first, or use --force if you are sure nothing uses it`;
  return errorText(err);
}
