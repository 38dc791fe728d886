/**
 * The progress line of a backup run (the run tells it, through
 * BackupRun.progress, as each session starts and ends), and byte sizes as
 * people read them. A one-line progress bar on stderr, drawn only when stderr is a TTY (logs
 * and pipes get nothing decorative). Redrawn at most ten times a second.
 */

import type { SessionProgress } from '../../../backup/run-backup.js';
import type { Reporter } from '../../../core/io.js';

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
