/**
 * The proof of a switched server: agyctl runs itself, as a child, exactly
 * as a user would: `probe` (start the new build, `initialize`, stop it),
 * then, when the state dir is signed in, `check --live` (credentials
 * accepted). As root on a user's state dir those commands already run as
 * its owner (src/cli/as-owner.ts). The child's exit code is the proof's.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { AgyError, asExitCode, EXIT, type ExitCode, InterruptedError } from '../core/errors.js';
import { agyctlEntryArgs } from '../core/runtime.js';
import { shellQuote } from '../util/shell-quote.js';
import { sanitizeForTerminal } from '../util/terminal-text.js';

export interface ProofTarget {
  /** The server's command line, as --server takes it. */
  server: string;
  /** --state-dir to pass (root: the one given; a user: theirs), or none. */
  stateDir: string | undefined;
  /** The token file of that state dir, when it is signed in (check --live runs then). */
  signedIn: boolean;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  timeoutMs: number;
}

export interface ProofStep {
  step: 'initialize' | 'check --live';
  exit: ExitCode;
  message: string | undefined;
  /** agentInfo.version as the server reported it (initialize only). */
  reportedVersion?: string | null;
}

export const serverLine = (file: string, args: readonly string[]): string => [file, ...args].map(shellQuote).join(' ');

/** Runs `agyctl <argv> --json` and returns its exit code and parsed document. */
async function runSelf(argv: string[], target: ProofTarget): Promise<{ exit: ExitCode; doc: Record<string, unknown> }> {
  const env = { ...target.env };
  delete env.AGYCTL_SERVER;
  const child = spawn(process.execPath, [...agyctlEntryArgs(), ...argv, '--json'], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const chunks: Buffer[] = [];
  let size = 0;
  child.stdout.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= 4 * 1024 * 1024) chunks.push(c);
  });
  const stop = (): void => {
    child.kill('SIGTERM');
  };
  target.signal.addEventListener('abort', stop, { once: true });
  const timer = setTimeout(stop, target.timeoutMs + 10_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c) => resolve(c));
    });
    if (target.signal.aborted) throw new InterruptedError('Interrupted during the proof.');
    let doc: Record<string, unknown> = {};
    try {
      doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      doc = {};
    }
    return { exit: asExitCode(code, EXIT.server), doc };
  } finally {
    clearTimeout(timer);
    target.signal.removeEventListener('abort', stop);
  }
}

function errorMessage(doc: Record<string, unknown>): string | undefined {
  const error = doc.error as { message?: unknown } | undefined;
  return typeof error?.message === 'string'
    ? sanitizeForTerminal(error.message, { singleLine: true }).slice(0, 500)
    : undefined;
}

const common = (target: ProofTarget): string[] => [
  '--server',
  target.server,
  ...(target.stateDir ? ['--state-dir', target.stateDir] : []),
];

/** `probe`: the build starts and answers initialize. */
export async function proveStarts(target: ProofTarget): Promise<ProofStep> {
  const { exit, doc } = await runSelf(['probe', '--timeout', `${target.timeoutMs}ms`, ...common(target)], target);
  const probe = doc.probe as { agent?: { version?: unknown } } | undefined;
  const version = probe?.agent?.version;
  return {
    step: 'initialize',
    exit,
    message: errorMessage(doc),
    reportedVersion: typeof version === 'string' ? version : null,
  };
}

/** `check --live`: the stored credentials are accepted. */
export async function proveCredentials(target: ProofTarget): Promise<ProofStep> {
  const { exit, doc } = await runSelf(
    ['check', '--live', '--timeout', `${target.timeoutMs}ms`, ...common(target)],
    target,
  );
  return { step: 'check --live', exit, message: errorMessage(doc) ?? summary(doc) };
}

function summary(doc: Record<string, unknown>): string | undefined {
  const status = doc.status;
  return typeof status === 'string' ? `check status: ${sanitizeForTerminal(status, { singleLine: true })}` : undefined;
}

/** Every step, stopping at the first that fails. */
export async function prove(target: ProofTarget): Promise<ProofStep[]> {
  const steps = [await proveStarts(target)];
  if (steps[0]?.exit === EXIT.ok && target.signedIn) steps.push(await proveCredentials(target));
  return steps;
}

export const tokenPresent = (token: string): boolean => fs.lstatSync(token, { throwIfNoEntry: false }) !== undefined;

export function proofFailure(step: ProofStep, rolledBackTo: string | undefined, failedVersion: string): AgyError {
  const back = rolledBackTo
    ? `version ${rolledBackTo} is back in use`
    : 'no version was installed before, so none is current now';
  const why = step.message ? `: ${step.message}` : '';
  const exit = step.exit === EXIT.ok ? EXIT.server : step.exit;
  return new AgyError(
    exit,
    'server-proof-failed',
    `The proof of version ${failedVersion} failed at ${step.step} (exit ${step.exit})${why}; ${back}.`,
    {
      hint:
        step.step === 'initialize'
          ? 'this build does not start here: run `agyctl probe --verbose --server …` on it, or install another build'
          : 'the credentials were rejected by this build: sign in again with `agyctl login`, then install it again',
      details: { failedStep: step.step, rolledBackTo: rolledBackTo ?? null },
    },
  );
}
