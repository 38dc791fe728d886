/**
 * --trace FILE: every JSON-RPC message in both directions, plus non-JSON
 * server output, as JSONL with a timestamp and a direction. Redacted before
 * it is written: the trace is meant to be attached to bug reports.
 */
import fs from 'node:fs';
import { redact, redactText } from './redact.js';
import type { TraceDirection, Tracer } from './trace.js';

export class FileTracer implements Tracer {
  private fd: number | undefined;

  constructor(file: string) {
    // 0600: even redacted, a trace describes the user's account and machine.
    this.fd = fs.openSync(file, 'a', 0o600);
  }

  record(direction: TraceDirection, payload: unknown): void {
    if (this.fd === undefined) return;
    const safe = typeof payload === 'string' ? redactText(payload) : redact(payload);
    fs.writeSync(this.fd, `${JSON.stringify({ ts: new Date().toISOString(), dir: direction, msg: safe })}\n`);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
