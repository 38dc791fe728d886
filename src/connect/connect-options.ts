/**
 * `agyctl connect`'s options, checked: the one type from its flags
 * (src/cli/commands/connect/handler.ts) to the one-host and fleet runs.
 */
import type { ConnectTarget } from './inventory.js';

export interface ConnectOptions {
  /** The hosts: the destinations given, or an inventory's. */
  targets: ConnectTarget[];
  /** Several hosts or an inventory: each is checked first, and logged in where needed. */
  fleet: boolean;
  /** ssh settings for every host (`ssh -o`), before a host's own. */
  sshOptions: string[];
  remoteAgyctl: string;
  method: string | undefined;
  /** Passed to the remote login as --timeout, in units every agyctl version reads. */
  timeout: string;
  timeoutMs: number;
  /** Open the sign-in URL in a browser here (`--no-open` makes it false). */
  open: boolean;
  sshTimeoutMs: number;
  /** Fleet: log in even where `agyctl check --live` passes. */
  force: boolean;
}

/** A host's ssh settings: the run's, then its own (from the inventory). */
export const sshOptionsFor = (options: ConnectOptions, target: ConnectTarget): string[] => [
  ...options.sshOptions,
  ...target.sshOptions,
];
