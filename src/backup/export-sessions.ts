/**
 * `agyctl sessions export [SNAPSHOT]`: the replayed history of each session,
 * one file per session (or all on stdout). Always replayed by one fresh
 * server in a scratch state dir, as `backup verify --prove` does
 * (prove-snapshot.ts), so a second server never opens the live
 * conversations: from a snapshot directly, or from the live state dir
 * through a snapshot taken into a private scratch dir the way `backup`
 * takes one (consistent while the server runs). Only loads: no session is
 * created, no prompt sent. Every scratch dir goes on every exit path; an
 * output file appears only whole (written under a temporary name, 0600,
 * fsynced, then linked into place: an existing file is never overwritten).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { withServer } from '../acp/lifecycle.js';
import { usageError } from '../core/errors.js';
import { tempBeside } from '../util/os/atomic-write.js';
import { createExclusive, lstatOrNull } from '../util/os/safe-fs.js';
import { noConversationsYet } from './discover.js';
import { errorText } from './error-text.js';
import type { BackupEvent } from './events.js';
import { type ExportedSessionInfo, type ExportFormat, WRITERS } from './export-format.js';
import { type Manifest, ManifestError, type ManifestSession, manifestAgyError, readManifest } from './manifest.js';
import { credentialsChanged, inScratchState, type ProveOptions } from './prove-snapshot.js';
import { replayOne } from './replay-proof.js';
import { type BackupRun, runBackup } from './run-backup.js';
import { withScratchDir } from './scratch-dir.js';

export type ExportSource = { kind: 'snapshot'; dir: string } | { kind: 'live' };
export type ExportTarget = { kind: 'dir'; dir: string } | { kind: 'stdout'; stream: Writable };

/** `sessions export`'s options, checked once from its flags (cli/commands/sessions/export-handler.ts). */
export interface ExportOptions {
  source: ExportSource;
  /** The live state dir (--state-dir): copied for a live export, its settings and token lent to the scratch server. */
  stateDir: string;
  /** --session: only these conversations (none: all). */
  sessionIds: string[];
  format: ExportFormat;
  target: ExportTarget;
  /** --busy-timeout, for the copy of the live state dir. */
  busyBudgetMs: number;
  /** --load-timeout: each server call's deadline. */
  callTimeoutMs: number;
}

/** What an export adds to its options: where its scratch dirs go, how its server starts, its signal, events and progress line. */
export interface ExportRun {
  tmpRoot: string;
  /** Server start options for a state dir (the box's command, HOME pointed at the scratch one). */
  startFor: ProveOptions['startFor'];
  signal: AbortSignal;
  fallbackCwd: string;
  /** What the copy, the restore into the scratch state dir and the replay tell a person as they go (events.ts). */
  emit: (event: BackupEvent) => void;
  /** The live copy's progress line. */
  progress?: BackupRun['progress'];
  /** What the export is doing, for a progress line: copying, starting the server, replaying session i/n (and its messages so far). */
  onProgress?: (what: string) => void;
}

/** An export's options and run together: what its steps read. */
type ExportInput = ExportOptions & ExportRun;

export interface ExportedSession {
  id: string;
  /** The file written; null on stdout. */
  file: string | null;
  cwd: string | null;
  modified: string | null;
  messages: number;
  user: number;
  agent: number;
  bytes: number;
}

export interface ExportReport {
  source: string;
  format: ExportFormat;
  out: string;
  /** When the copy that was replayed was taken. */
  copied: string | null;
  sessions: ExportedSession[];
  failed: Array<{ id: string; reason: string }>;
  notes: string[];
}

export async function exportSessions(options: ExportOptions, run: ExportRun): Promise<ExportReport> {
  const input: ExportInput = { ...options, ...run };
  if (input.source.kind === 'snapshot') return exportSnapshot(input, input.source.dir, input.source.dir);
  if (noConversationsYet(input.stateDir) && input.sessionIds.length === 0) return emptyReport(input, 'live');
  return withScratchDir(input.tmpRoot, 'agyctl-export-', async (root) => {
    input.onProgress?.('copying the live conversations (a consistent copy, as backup takes it)...');
    const backup = await runBackup(
      {
        stateDir: input.stateDir,
        backupDir: path.join(root, 'snapshots'),
        sessionIds: input.sessionIds,
        retention: {},
        busyBudgetMs: input.busyBudgetMs,
        jobs: undefined,
      },
      { signal: input.signal, emit: input.emit, ...(input.progress ? { progress: input.progress } : {}) },
    );
    const report = await exportSnapshot(input, backup.snapshot.path, 'live');
    report.failed.push(...backup.failed.map((f) => ({ id: f.id, reason: `not copied: ${f.reason}` })));
    return report;
  });
}

function emptyReport(input: ExportInput, source: string): ExportReport {
  return {
    source,
    format: input.format,
    out: targetName(input.target),
    copied: null,
    sessions: [],
    failed: [],
    notes: ['no conversations'],
  };
}

const targetName = (t: ExportTarget): string => (t.kind === 'dir' ? t.dir : '-');
const fileFor = (dir: string, id: string, format: ExportFormat): string => path.join(dir, `${id}.${format}`);

/** Before any server starts: an output file that exists is refused (exit 2), never overwritten. */
function refuseExisting(input: ExportInput, ids: string[]): void {
  if (input.target.kind !== 'dir') return;
  const dir = input.target.dir;
  const taken = ids.map((id) => fileFor(dir, id, input.format)).filter((f) => lstatOrNull(f) !== null);
  if (taken.length > 0)
    throw usageError(
      `${taken[0]}${taken.length > 1 ? ` and ${taken.length - 1} more` : ''} already exist; agyctl never overwrites an export.`,
      'choose another --out DIR, or move the old files away',
    );
}

/** The snapshot's manifest; one that cannot be used is the error restore and verify give for it (not a bug). */
function manifestOf(snapshotDir: string): Manifest {
  try {
    return readManifest(snapshotDir);
  } catch (err) {
    throw err instanceof ManifestError ? manifestAgyError(err, snapshotDir) : err;
  }
}

async function exportSnapshot(input: ExportInput, snapshotDir: string, source: string): Promise<ExportReport> {
  const manifest = manifestOf(snapshotDir);
  const chosen =
    input.sessionIds.length === 0
      ? manifest.sessions
      : manifest.sessions.filter((s) => input.sessionIds.includes(s.id));
  const missing = input.sessionIds.filter((id) => !manifest.sessions.some((s) => s.id === id));
  if (missing.length > 0)
    throw usageError(
      `${source === 'live' ? 'The state dir' : `Snapshot ${snapshotDir}`} has no session ${missing.join(', ')}.`,
      "run `agyctl sessions` (or look at the snapshot's manifest.json) for the ids",
    );
  refuseExisting(
    input,
    chosen.map((s) => s.id),
  );
  const report: ExportReport = { ...emptyReport(input, source), copied: manifest.created, notes: [] };
  if (chosen.length === 0) return { ...report, notes: ['no conversations'] };
  input.onProgress?.(`restoring ${chosen.length} session(s) into a scratch state dir for the replay...`);
  const { result, changed } = await inScratchState(
    { ...input, snapshotDir, sessionIds: chosen.map((s) => s.id) },
    async (stateDir, restored, failed) => {
      report.failed.push(...failed.map((f) => ({ id: f.id, reason: `not restored for replay: ${f.reason}` })));
      if (restored.length > 0) await replayAll(input, stateDir, restored, report);
      return report;
    },
  );
  if (changed.length > 0) result.notes.push(credentialsChanged(changed, input.stateDir));
  return result;
}

function modifiedOf(s: ManifestSession): string | null {
  const times = [s.source?.db?.mtime, s.source?.wal?.mtime].filter((t): t is string => typeof t === 'string');
  return times.length > 0 ? times.sort().at(-1)! : null;
}

/** The sessions restored into the scratch `stateDir`, replayed by one fresh server into the export's target; `report` collects them. */
async function replayAll(
  input: ExportInput,
  stateDir: string,
  sessions: ManifestSession[],
  report: ExportReport,
): Promise<void> {
  const copied = report.copied!;
  const writer = WRITERS[input.format];
  input.onProgress?.('starting a fresh server to replay the sessions...');
  await withServer(input.startFor(stateDir), async ({ server }) => {
    for (const [i, s] of sessions.entries()) {
      const replaying = `replaying ${i + 1}/${sessions.length} ${s.id}`;
      input.onProgress?.(replaying);
      const info: ExportedSessionInfo = { id: s.id, cwd: s.cwd, modified: modifiedOf(s), copied };
      const sink = openSink(input.target, fileFor(targetName(input.target), s.id, input.format));
      let index = 0;
      try {
        sink.write(writer.header(info));
        const loaded = await replayOne(server.connection, s, {
          ...input,
          onMessage: (_id, m) => {
            sink.write(writer.message(s.id, index, m));
            index += 1;
            input.onProgress?.(`${replaying}: ${index} message(s)`);
          },
        });
        if (!loaded.digest) {
          sink.abort();
          report.failed.push({ id: s.id, reason: loaded.problem ?? 'did not load' });
          continue;
        }
        const file = sink.commit();
        const d = loaded.digest;
        report.sessions.push({
          ...info,
          file,
          messages: d.user + d.agent,
          user: d.user,
          agent: d.agent,
          bytes: sink.bytes,
        });
      } catch (err) {
        sink.abort();
        throw err;
      }
    }
  });
}

interface Sink {
  write(text: string): void;
  /** The file now in place (null for stdout). */
  commit(): string | null;
  abort(): void;
  readonly bytes: number;
}

function openSink(target: ExportTarget, file: string): Sink {
  if (target.kind === 'stdout') {
    let bytes = 0;
    return {
      write: (text) => {
        bytes += Buffer.byteLength(text);
        target.stream.write(text);
      },
      commit: () => null,
      abort: () => undefined,
      get bytes() {
        return bytes;
      },
    };
  }
  return new FileSink(file);
}

/** A file that appears only whole: a 0600 temporary beside it, fsynced, then hard-linked to its name (never over an existing one). */
class FileSink implements Sink {
  bytes = 0;
  private readonly tmp: string;
  private fd: number | undefined;
  private readonly removeTmp = (): void => fs.rmSync(this.tmp, { force: true });

  constructor(private readonly file: string) {
    this.tmp = tempBeside(file);
    this.fd = this.inOutDir(() => createExclusive(this.tmp, 0o600));
    fs.fchmodSync(this.fd, 0o600);
    process.on('exit', this.removeTmp); // a second Ctrl-C leaves no half file either
  }

  write(text: string): void {
    const buf = Buffer.from(text, 'utf8');
    this.inOutDir(() => {
      for (let off = 0; off < buf.length; ) off += fs.writeSync(this.fd!, buf, off);
    });
    this.bytes += buf.length;
  }

  /** A failure writing there names the --out directory, not the temporary file agyctl made in it. */
  private inOutDir<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      if (err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string')
        Object.assign(err, { path: path.dirname(this.file) });
      throw err;
    }
  }

  commit(): string {
    this.inOutDir(() => fs.fsyncSync(this.fd!));
    this.close();
    try {
      fs.linkSync(this.tmp, this.file);
    } catch (err) {
      throw Object.assign(new Error(`${this.file}: ${errorText(err)}`), { code: (err as NodeJS.ErrnoException).code });
    } finally {
      this.removeTmp();
      process.off('exit', this.removeTmp);
    }
    return this.file;
  }

  abort(): void {
    this.close();
    this.removeTmp();
    process.off('exit', this.removeTmp);
  }

  private close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
