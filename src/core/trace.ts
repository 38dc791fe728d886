/**
 * The tracer interface every protocol layer writes to. The file-backed one
 * (file-tracer.ts) is loaded only when --trace is given.
 */

export type TraceDirection = 'send' | 'recv' | 'stdout-noise' | 'stderr' | 'event';

export interface Tracer {
  record(direction: TraceDirection, payload: unknown): void;
  close(): void;
}

export const nullTracer: Tracer = { record() {}, close() {} };
