/**
 * Helpers for end-to-end tests: run the BUILT binary (bin/agyctl.js ->
 * dist/) in a throwaway HOME, against the bundled simulator.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { onTestFinished, TestRunner } from 'vitest';
import { ROOT } from './root.js';

export { ROOT };
export const BIN = path.join(ROOT, 'bin', 'agyctl.js');
export const SIM = path.join(ROOT, 'scripts', 'agy-acp-sim');

/**
 * Which agyctl the e2e helpers run: `node bin/agyctl.js` (dist/), or, in the
 * `release` project (AGYCTL_TEST_RUNTIME=executable), the single executable
 * `npm run release` wrote to release/ (built once per run by
 * test/helpers/release-build.ts). The same test file runs both ways.
 * AGYCTL_TEST_BIN=<path to bin/agyctl.js> runs another build instead (an
 * older commit's, built in a worktree of its own): how a race test is shown
 * to fail on the code it guards against.
 */
export const RUNTIME: 'node' | 'executable' = process.env.AGYCTL_TEST_RUNTIME === 'executable' ? 'executable' : 'node';
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
export const RELEASE_DIR = path.join(ROOT, 'release');
export const EXE = path.join(RELEASE_DIR, `agyctl-${VERSION}-linux-x64`);
export const DEB = path.join(RELEASE_DIR, `agyctl_${VERSION}_amd64.deb`);
/** The arm64 release files (cross-built: they run here only under qemu-aarch64-static). */
export const EXE_ARM64 = path.join(RELEASE_DIR, `agyctl-${VERSION}-linux-arm64`);
export const DEB_ARM64 = path.join(RELEASE_DIR, `agyctl_${VERSION}_arm64.deb`);
/** The command line that runs agyctl, before its arguments (for tests that run it through a shell). */
export const AGYCTL_ARGV: readonly string[] =
  RUNTIME === 'executable' ? [EXE] : ['node', process.env.AGYCTL_TEST_BIN || BIN];
/**
 * The executable writes its SQLite addon out once per content; every sandbox
 * of a run shares one directory, so concurrent test processes race for it as
 * processes on a box do.
 */
const EXE_CACHE = path.join(os.tmpdir(), `agyctl-test-exe-cache-${process.getuid?.() ?? 0}`);
/**
 * The agyctl and the simulator the helpers below run. A test whose agyctl
 * works as another user moves them where that user can read them
 * (readable-app.ts), since a checkout may sit in a 0700 directory.
 */
const current = { argv: [...AGYCTL_ARGV], sim: SIM };
export function runAgyctlFrom(app: { argv: string[]; sim: string }): void {
  current.argv = [...app.argv];
  current.sim = app.sim;
}
/** The command line the helpers run agyctl with (AGYCTL_ARGV, or its readable copy's). */
export const agyctlArgv = (): string[] => [...current.argv];
/** The simulator's launcher the helpers use (SIM, or its readable copy). */
export const simPath = (): string => current.sim;

const runtimeEnv = (): NodeJS.ProcessEnv => (RUNTIME === 'executable' ? { AGYCTL_CACHE_DIR: EXE_CACHE } : {});

export interface Sandbox {
  root: string;
  home: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  /** Removes the sandbox now (it is removed after its test anyway); a second call does nothing. */
  cleanup(): void;
}

/**
 * A fresh HOME with nothing in it; agyctl and the simulator both derive the state dir from it.
 * The one clean-up of the tests' sandboxes: a sandbox made by a test (or its beforeEach) is removed
 * when that test has finished, after the afterEach hooks, which may still stop what runs in it or
 * look for its leftover processes; a file keeps no list of sandboxes to remove. One made in a
 * beforeAll belongs to no test: its maker removes it (cleanup()).
 */
export function makeSandbox(extraEnv: NodeJS.ProcessEnv = {}): Sandbox {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-test-'));
  const home = path.join(root, 'home');
  fs.mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: root,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    AGYCTL_SERVER: `node ${current.sim}`,
    ...runtimeEnv(),
    ...extraEnv,
  };
  const cleanup = (): void => fs.rmSync(root, { recursive: true, force: true });
  if (TestRunner.getCurrentTest()) onTestFinished(cleanup);
  return { root, home, stateDir: path.join(home, '.gemini', 'antigravity-acp'), env, cleanup };
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
  cwd?: string;
}

/** Run agyctl to completion. Every child has a deadline: a hung agyctl fails the test instead of hanging it. */
export async function agyctl(args: string[], sandbox: Sandbox, options: RunOptions = {}): Promise<RunResult> {
  const result = await execa(current.argv[0]!, [...current.argv.slice(1), ...args], {
    env: { ...sandbox.env, ...options.env },
    extendEnv: false,
    cwd: options.cwd ?? sandbox.root,
    reject: false,
    timeout: options.timeoutMs ?? 45_000,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Start agyctl without waiting (for Ctrl-C and streaming tests). */
export function spawnAgyctl(args: string[], sandbox: Sandbox, options: RunOptions = {}): ResultPromise {
  return execa(current.argv[0]!, [...current.argv.slice(1), ...args], {
    env: { ...sandbox.env, ...options.env },
    extendEnv: false,
    cwd: options.cwd ?? sandbox.root,
    reject: false,
    timeout: options.timeoutMs ?? 45_000,
    stdin: 'pipe',
    buffer: true,
  });
}

export function parseJson(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout) as Record<string, unknown>;
}

export function parseEvents(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Pids of live processes whose environment carries this sandbox's HOME: what a test left behind. */
export function processesOf(sandbox: Sandbox): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = fs.readFileSync(`/proc/${name}/environ`, 'utf8');
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue; // zombies are already dead
      if (environ.split('\0').includes(`HOME=${sandbox.home}`)) found.push(Number(name));
    } catch {
      /* gone or not ours */
    }
  }
  return found;
}

/** Wait (bounded) until no process of the sandbox remains; returns the survivors. */
export async function waitNoProcesses(sandbox: Sandbox, timeoutMs = 8_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = processesOf(sandbox);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesOf(sandbox);
  }
  return left;
}

export function writeSettings(sandbox: Sandbox, settings: unknown): string {
  fs.mkdirSync(sandbox.stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(sandbox.stateDir, 'settings.json');
  fs.writeFileSync(file, typeof settings === 'string' ? settings : `${JSON.stringify(settings, null, 2)}\n`);
  return file;
}
