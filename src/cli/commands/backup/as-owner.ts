/**
 * Root backing up a user's state dir. The owner's side (`agyctl
 * __snapshot-archive`, run as the state dir's owner) snapshots the
 * conversations into a scratch dir of its own and streams them as the
 * archive `backup --archive` writes; root's side reads that stream into
 * its own backup dir, checking every hash against the manifest, and makes
 * it a snapshot there. Root opens nothing in the user's tree.
 */
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { ArchiveError, ArchiveTooBig, readArchive } from '../../../backup/archive-read.js';
import { writeArchive } from '../../../backup/archive-write.js';
import type { Previous } from '../../../backup/backup-session.js';
import { noConversationsYet, SESSION_ID } from '../../../backup/discover.js';
import type { Manifest } from '../../../backup/manifest.js';
import { previousFromHints, reuseHints } from '../../../backup/owner-reuse.js';
import { runBackup } from '../../../backup/run-backup.js';
import { withScratchDir } from '../../../backup/scratch-dir.js';
import { AgyError, asExitCode, EXIT, usageError } from '../../../core/errors.js';
import { tempRoot } from '../../../core/paths.js';
import { ARCHIVE_FD_VAR, relayFd, type TreeOwner } from '../../../util/os/tree-owner.js';
import { sanitizeForTerminal } from '../../../util/terminal-text.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { collect, globalArgv, type Relay, withOwnerChild } from '../../as-owner.js';
import { parseCountOption, parseDurationOption } from '../../parse-options.js';
import type { BackupCommandOptions, SnapshotArchiveFlags } from './flags.js';
import { formatBytes, Progress, sayBackupEvents } from './progress.js';

/** The owner's side: a snapshot in a scratch dir of the owner's, streamed to root's side through ARCHIVE_FD_VAR. */
export async function snapshotArchiveCommand(io: HandlerIO, flags: SnapshotArchiveFlags): Promise<CommandResult> {
  if (flags.plan) return planCommand(io, flags.session ?? []);
  const fd = relayFd(io.ctx.env, ARCHIVE_FD_VAR);
  if (fd === undefined) throw usageError('__snapshot-archive is internal: `agyctl backup` runs it as root.');
  const sessionIds = flags.session ?? [];
  if (sessionIds.length === 0 && noConversationsYet(io.opts.stateDir))
    return { exit: EXIT.ok, data: { noConversations: true } };
  const previous = flags.previousStdin ? await hintsFromRoot(io) : undefined;
  return withScratchDir(tempRoot(io.ctx.env), 'agyctl-snapshot-', async (scratch) => {
    const report = await runBackup(
      {
        stateDir: io.opts.stateDir,
        backupDir: scratch,
        sessionIds,
        retention: {},
        busyBudgetMs: parseDurationOption('--busy-timeout', flags.busyTimeout),
        compact: flags.compact === true,
        jobs: flags.jobs ? parseCountOption('--jobs', flags.jobs) : undefined,
      },
      {
        signal: io.ctx.signal,
        emit: sayBackupEvents(io.out),
        progress: (sessions, bytes) => new Progress(io.out, sessions, bytes),
        ...(previous ? { previous } : {}),
      },
    );
    const out = fs.createWriteStream('', { fd });
    await writeArchive(report.snapshot.path, out, io.ctx.signal, undefined, {
      withoutReusedDb: previous !== undefined,
    });
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return { exit: EXIT.ok, data: {} };
  });
}

/** Root's previous snapshot as root describes it, read from stdin (bounded, checked: owner-reuse.ts). */
async function hintsFromRoot(io: HandlerIO): Promise<Previous> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.ctx.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_HINTS_BYTES) throw usageError('__snapshot-archive: the reuse hints on stdin are too large.');
    chunks.push(Buffer.from(chunk));
  }
  try {
    return previousFromHints(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  } catch (err) {
    throw usageError(`__snapshot-archive: unusable reuse hints on stdin (${(err as Error).message}).`);
  }
}

/** What root may send as reuse hints, at most. */
const MAX_HINTS_BYTES = 256 * 1024 * 1024;

/** The owner's side of root's `backup --dry-run`: the sessions a run would back up, read as the owner. */
async function planCommand(io: HandlerIO, sessionIds: string[]): Promise<CommandResult> {
  if (sessionIds.length === 0 && noConversationsYet(io.opts.stateDir))
    return { exit: EXIT.ok, data: { noConversations: true } };
  const { plannedSessions } = await import('../../../backup/dry-run.js');
  return { exit: EXIT.ok, data: { plan: { sessions: plannedSessions(io.opts.stateDir, sessionIds) } } };
}

/**
 * Root's `backup --dry-run` on a user's state dir: the sessions come from the
 * owner's side (the same child as the real run, so the plan agrees with it
 * and root follows none of the user's links); undefined when the state dir
 * has no conversations yet. Every id is checked to be a session id.
 */
export async function planFromOwner(
  io: HandlerIO,
  owner: TreeOwner,
  sessionIds: string[],
  deadlineMs: number,
): Promise<string[] | undefined> {
  const argv = [
    ...globalArgv({ ...io.opts, json: true }),
    '__snapshot-archive',
    '--plan',
    ...sessionIds.flatMap((id) => ['--session', id]),
  ];
  const doc: Buffer[] = [];
  const exit = await withOwnerChild(
    owner,
    { argv, ctx: io.ctx, opts: { ...io.opts, json: true }, stdin: 'ignore', stdout: 'pipe', relays: [], deadlineMs },
    (child) => collect(child.stdout!, doc),
  );
  const answer = parseDoc(doc);
  if (exit !== EXIT.ok) throw childError(exit, answer);
  if (answer.noConversations === true) return undefined;
  const sessions = (answer.plan as { sessions?: unknown } | undefined)?.sessions;
  if (
    !Array.isArray(sessions) ||
    sessions.length > 1_000_000 ||
    !sessions.every((id) => typeof id === 'string' && SESSION_ID.test(id))
  )
    throw new AgyError(
      EXIT.internal,
      'internal',
      "the state dir's owner sent a plan that is not a list of session ids",
    );
  return sessions as string[];
}

/** The owner's state dir has no conversations yet: root's backup says so, as for its own state dir. */
export class NoConversationsYet extends Error {}

/** Root's side: fills `work` (in root's backup dir) from the owner's stream; returns the manifest it carried. */
export function snapshotFromOwner(
  io: HandlerIO,
  owner: TreeOwner,
  options: BackupCommandOptions,
  deadlineMs: number,
): (work: string, previous: Previous | undefined) => Promise<Manifest> {
  return async (work, previous) => {
    const hints = previous ? Buffer.from(JSON.stringify({ sessions: reuseHints(previous) })) : undefined;
    const argv = [
      ...globalArgv({ ...io.opts, json: true }),
      '__snapshot-archive',
      '--busy-timeout',
      `${options.busyBudgetMs}ms`,
      ...options.sessionIds.flatMap((id) => ['--session', id]),
      ...(options.compact ? ['--compact'] : []),
      ...(hints ? ['--previous-stdin'] : []),
      ...(options.jobs ? ['--jobs', String(options.jobs)] : []),
    ];
    let manifest: Manifest | undefined;
    let rejected: unknown;
    const archive: Relay = {
      variable: ARCHIVE_FD_VAR,
      chunks: [],
      consume: async (from: Readable) => {
        try {
          manifest = await readArchive(from, work, io.ctx.signal, options.maxBytes, {
            reusedWithoutDb: hints !== undefined,
          });
        } catch (err) {
          rejected = err;
          from.destroy();
        }
      },
    };
    const doc: Buffer[] = [];
    const exit = await withOwnerChild(
      owner,
      {
        argv,
        ctx: io.ctx,
        opts: { ...io.opts, json: true },
        stdin: hints ? 'pipe' : 'ignore',
        stdout: 'pipe',
        relays: [archive],
        deadlineMs,
      },
      (child) => {
        if (hints) {
          // A child that ends without reading them (an error, Ctrl-C) closes the pipe: its exit code tells why.
          child.stdin!.on('error', () => undefined);
          child.stdin!.end(hints);
        }
        return collect(child.stdout!, doc);
      },
    );
    const answer = parseDoc(doc);
    if (rejected instanceof ArchiveTooBig) throw overCap(rejected); // the owner's side then fails on a closed pipe
    if (exit !== EXIT.ok) throw childError(exit, answer);
    if (answer.noConversations === true) throw new NoConversationsYet();
    if (!manifest) throw streamRejected(rejected);
    return manifest;
  };
}

/** Text the owner's side sends root to show: one line, no control characters, at most 2000 characters. */
const fromOwner = (text: string): string => sanitizeForTerminal(text, { singleLine: true }).slice(0, 2000);

function parseDoc(doc: Buffer[]): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.concat(doc).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function childError(exit: number, answer: Record<string, unknown>): AgyError {
  const error = (answer.error ?? {}) as { code?: unknown; message?: unknown; hint?: unknown };
  if (exit === EXIT.interrupted) return new AgyError(EXIT.interrupted, 'interrupted', 'Interrupted.');
  return new AgyError(
    asExitCode(exit, EXIT.internal),
    typeof error.code === 'string' ? error.code : 'internal',
    typeof error.message === 'string'
      ? fromOwner(error.message)
      : `the snapshot as the state dir's owner failed (exit ${exit})`,
    typeof error.hint === 'string' ? { hint: fromOwner(error.hint) } : {},
  );
}

function overCap(err: ArchiveTooBig): AgyError {
  return new AgyError(
    EXIT.findings,
    'backup-over-cap',
    `The state dir's owner sent a snapshot of ${formatBytes(err.declared)}, more than --max-bytes ${formatBytes(err.cap)}; nothing was written and no snapshot was made.`,
    {
      hint: 'check what fills that state dir (agyctl sessions; sparse or huge brain/ files), or raise the cap: agyctl backup --max-bytes 64G',
      details: { declaredBytes: err.declared, maxBytes: err.cap },
    },
  );
}

function streamRejected(err: unknown): AgyError {
  const why = err instanceof ArchiveError || err instanceof Error ? err.message : 'it ended early';
  return new AgyError(
    EXIT.findings,
    'archive-damaged',
    `The snapshot the state dir's owner sent was rejected (${why}); no snapshot was made.`,
    { hint: 'run the backup again; if it fails again, run it as the state dir owner with -v' },
  );
}
