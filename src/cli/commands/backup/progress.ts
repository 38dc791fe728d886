/**
 * What a backup run shows on stderr while it runs: its progress line (the run
 * tells it, through BackupRun.progress, as each session starts and ends), a
 * one-line bar drawn only when stderr is a TTY (logs and pipes get nothing
 * decorative), redrawn at most ten times a second; and the words of the events
 * backup, restore, their proofs and `sessions export` emit (src/backup/events.ts):
 * warnings, and details for --verbose. Also byte sizes as people read them.
 */

import type { BackupEvent } from '../../../backup/events.js';
import type { SessionProgress } from '../../../backup/run-backup.js';
import type { Reporter } from '../../../core/io.js';
import { describeUnrecognised } from '../../../core/paths.js';
import { sanitizeForTerminal } from '../../../util/terminal-text.js';

const WIDTH = 24;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export class Progress implements SessionProgress {
  private sessions = 0;
  private bytes = 0;
  private lastDraw = 0;
  private readonly enabled: boolean;

  constructor(
    private readonly out: Reporter,
    private readonly totalSessions: number,
    private readonly totalBytes: number,
  ) {
    this.enabled = out.stderrIsTTY && totalSessions > 0;
  }

  /** About to work on `label`. */
  start(label: string): void {
    this.draw(label, false);
  }

  /** One session finished (whatever the outcome), `bytes` of source accounted. */
  advance(bytes: number, label = ''): void {
    this.sessions += 1;
    this.bytes += bytes;
    this.draw(label, this.sessions === this.totalSessions);
  }

  finish(): void {
    if (this.enabled) this.out.clearStatus();
  }

  private draw(label: string, force: boolean): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const frac = this.totalBytes > 0 ? Math.min(1, this.bytes / this.totalBytes) : this.sessions / this.totalSessions;
    const filled = Math.round(frac * WIDTH);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}]`;
    this.out.status(
      `${bar} ${this.sessions}/${this.totalSessions} sessions  ${formatBytes(this.bytes)}/${formatBytes(this.totalBytes)}  ${label}`,
    );
  }
}

type Said = { level: 'warn' | 'verbose'; text: string };

/** An event's words; a `switch` with no default, so an event with no words here is a tsc error. */
function backupEventText(e: BackupEvent): Said {
  const warn = (text: string): Said => ({ level: 'warn', text });
  switch (e.type) {
    case 'unrecognised-entries':
      return warn(describeUnrecognised(e.entries));
    case 'no-database':
      return warn(
        `${e.ids.join(', ')}: no database beside ${e.ids.length === 1 ? 'its' : 'their'} other files (a .meta or -shm alone); nothing to back up`,
      );
    case 'reuse-skipped':
      return warn(`skipping ${e.snapshot} for reuse: ${e.error}`);
    case 'owner-reuse-refused':
      return warn(
        "the state dir's owner named a session unchanged that root's previous snapshot does not match; copying all again",
      );
    case 'brain-file-skipped':
      // The path and reason come from the user's tree: one line, no control characters.
      return warn(sanitizeForTerminal(`${e.id}: brain/${e.id}/${e.path} skipped: ${e.reason}`, { singleLine: true }));
    case 'session-done': {
      const s = e.session;
      return {
        level: 'verbose',
        text: `${s.id}: ${s.reused ? `reused from ${s.reusedFrom}` : `snapshot ${s.bytes} bytes`} in ${e.ms} ms`,
      };
    }
    case 'session-failed':
      return warn(`${e.id}: ${e.reason}`);
    case 'retention-skipped':
      return warn(`retention skipped: ${e.why}; no snapshot was deleted`);
    case 'snapshot-not-removed':
      return warn(`could not remove snapshot ${e.snapshot}: ${e.error}`);
    case 'leftover-removed':
      return { level: 'verbose', text: `removed ${e.name}, left by a restore that was killed` };
    case 'session-not-restored':
      return warn(`${e.id}: not restored: ${e.reason}`);
    case 'forced-while-open':
      return warn(`--force: restoring although ${e.files} is open; a running server may overwrite or corrupt it`);
    case 'credentials-changed':
      return warn(e.note);
    case 'replay-not-recorded':
      return warn(e.why);
  }
}

/** Where a run's events go: said on stderr as they happen, as warnings or --verbose lines. */
export function sayBackupEvents(out: Reporter): (event: BackupEvent) => void {
  return (event) => {
    const said = backupEventText(event);
    if (said.level === 'warn') out.warn(said.text);
    else out.verbose(said.text);
  };
}
