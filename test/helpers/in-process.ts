/**
 * Run agyctl in this process: `run(argv, ctx)` from src/cli/main.ts with
 * in-memory streams and an AbortController, as gh tests commands with
 * iostreams.Test(). For flag parsing, usage errors and the --json contract;
 * process, signal and terminal behaviour stay in the e2e tests (built binary).
 */
import os from 'node:os';
import { PassThrough, Readable } from 'node:stream';
import type { RunContext } from '../../src/cli/action.js';
import { run } from '../../src/cli/main.js';

export interface InProcessOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** What agyctl reads on stdin; an empty, ended stream when absent. */
  stdin?: string;
  /** Abort (like Ctrl-C) after this long, so a hung command fails the test instead of hanging it. */
  deadlineMs?: number;
  /** Sees stdout as it is written (NDJSON events of streaming commands). */
  onStdout?: (chunk: string) => void;
}

export interface InProcessResult {
  exit: number;
  stdout: string;
  stderr: string;
  /** Whether the deadline aborted the run. */
  aborted: boolean;
  /** stdout as the single JSON document (throws, naming stdout, when it is not exactly one). */
  json(): Record<string, unknown>;
}

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

export async function runInProcess(argv: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const stdout = collect();
  if (options.onStdout) stdout.stream.on('data', (c: Buffer) => options.onStdout!(c.toString('utf8')));
  const stderr = collect();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.deadlineMs ?? 20_000);
  const ctx: RunContext = {
    env: options.env ?? { HOME: os.tmpdir(), NO_COLOR: '1', PATH: process.env.PATH },
    cwd: options.cwd ?? os.tmpdir(),
    stdin: Readable.from(options.stdin === undefined ? [] : [options.stdin]),
    stdout: stdout.stream,
    stderr: stderr.stream,
    signal: controller.signal,
  };
  let exit: number;
  try {
    exit = await run(argv, ctx);
  } finally {
    clearTimeout(timer);
  }
  // Let the PassThroughs hand over what was written before reading them.
  await new Promise((r) => setImmediate(r));
  const out = stdout.text();
  return {
    exit,
    stdout: out,
    stderr: stderr.text(),
    aborted: controller.signal.aborted,
    json: () => {
      try {
        return JSON.parse(out) as Record<string, unknown>;
      } catch {
        throw new Error(`stdout is not one JSON document:\n${out}`);
      }
    },
  };
}
