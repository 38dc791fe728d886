/** The messages between the snapshot pool (worker-pool.ts) and its worker threads (snapshot-worker.ts), in a file of their own so neither imports the other. */
export type Task =
  | { kind: 'vacuum'; source: string; tmp: string; busyBudgetMs: number; checkBelowBytes?: number }
  | { kind: 'check'; file: string }
  | { kind: 'hash'; file: string }
  | { kind: 'checkHash'; file: string };

export interface TaskReply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: { message: string; code?: unknown; name: string };
}
