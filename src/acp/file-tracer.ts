/**
 * --trace FILE: every JSON-RPC message in both directions, plus non-JSON
 * server output, as JSONL with a timestamp and a direction. Redacted before
 * it is written: the trace is meant to be attached to bug reports. Opened
 * with O_NOFOLLOW (a symlink is refused: `unsafe-symlink`, exit 2), mode 0600.
 */
import fs from 'node:fs';
import type { TraceDirection, Tracer } from '../core/io.js';
import { fsAgyError } from '../util/fs-errors.js';
import { notYoursError, openNoFollow } from '../util/os/safe-fs.js';
import { REDACTED, redact, redactText } from './redact.js';

/** The process's own output streams: symlinks the system keeps, safe to follow. */
const STD_STREAM = /^\/(dev\/(stdout|stderr|fd\/\d+)|proc\/self\/fd\/\d+)$/;

/**
 * Append-only, never through a symlink (as root, a link planted where the
 * trace goes would redirect it into any file), created 0600 and narrowed to
 * 0600 when an existing file is wider: even redacted, a trace describes the
 * user's account and machine.
 */
export function openTraceFile(file: string): number {
  if (STD_STREAM.test(file)) return fs.openSync(file, 'a');
  const { O_WRONLY, O_APPEND, O_CREAT } = fs.constants;
  const fd = openNoFollow(file, O_WRONLY | O_APPEND | O_CREAT, 0o600, 'the --trace file');
  try {
    const st = fs.fstatSync(fd);
    // Another user's file (pre-created where the trace goes, in /tmp say) would get our lines and keep them theirs.
    if (st.isFile() && st.uid !== process.getuid?.()) throw notYoursError(file, st.uid, '--trace');
    if (st.isFile() && (st.mode & 0o077) !== 0) fs.fchmodSync(fd, 0o600);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

/** An email address anywhere in a string (an account's label may be one): personal data, shown but never traced. */
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** A trace's text: secrets redacted as everywhere, and email addresses too (a trace is meant to be shared). */
export const traceText = (text: string): string => redactText(text).replace(EMAIL, REDACTED);

export class FileTracer implements Tracer {
  private fd: number | undefined;
  private readonly file: string | undefined;

  /** A file, or a descriptor already open (root's side relays it into root's file: cli/as-owner.ts). */
  constructor(file: string | number) {
    this.fd = typeof file === 'number' ? file : openTraceFile(file);
    this.file = typeof file === 'number' ? undefined : file;
  }

  record(direction: TraceDirection, payload: unknown): void {
    if (this.fd === undefined) return;
    const safe = typeof payload === 'string' ? traceText(payload) : redact(payload, 0, traceText);
    try {
      fs.writeSync(this.fd, `${JSON.stringify({ ts: new Date().toISOString(), dir: direction, msg: safe })}\n`);
    } catch (err) {
      // A full disk fails the write through the descriptor, which names no path: it is the trace file's.
      throw fsAgyError(err, { defaultPath: this.file ?? '--trace' }) ?? err;
    }
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
