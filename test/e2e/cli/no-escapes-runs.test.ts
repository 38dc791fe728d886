/**
 * With NO_COLOR=1, with TERM=dumb and with --no-color, the commands' main
 * runs write no escape sequence, on a pseudo-terminal and on a pipe, in each
 * of the three modes: every command the simulator makes cheap (RUNS), the
 * login's paste prompt with its countdown and backup's progress bar
 * included. On a terminal with colour allowed the same runs write escapes
 * (the control). The prompts' answers (login, login finish, the replace
 * question) are driven in prompts-no-escapes.test.ts; every command's
 * --help and usage error in no-escapes-help-tree.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSandbox, type Sandbox, waitNoProcesses, writeSettings } from '../../helpers/cli.js';
import {
  COLOUR_ALLOWED,
  type ColourMode,
  escapesIn,
  NO_COLOUR_MODES,
  problemsOf,
  runLines,
  type Seen,
} from '../../helpers/escapes.js';
import { addConversation } from '../../helpers/sim-conversations.js';

/** A command's main run and the exit codes it may end with here (it ran: not a crash, not a missing node). */
interface Run {
  argv: string[];
  exits: number[];
}

/**
 * In order, in a sandbox whose server is signed out (`check` finds that, exit 3; the login waits at its
 * paste prompt until its --timeout, exit 5) and has two conversations. `{bk}` and `{root}` are the
 * sandbox's paths; `server` works in a prefix of its own (nothing installed there).
 */
const RUNS: Run[] = [
  { argv: ['version'], exits: [0] },
  { argv: ['help', 'exit-codes'], exits: [0] },
  { argv: ['completion', 'bash'], exits: [0] },
  { argv: ['settings', 'show'], exits: [0] },
  { argv: ['settings', 'validate'], exits: [0] },
  { argv: ['check'], exits: [3] },
  { argv: ['probe'], exits: [0] },
  { argv: ['login', '--timeout', '2s'], exits: [5] },
  { argv: ['login', 'status'], exits: [0, 2] },
  { argv: ['sessions'], exits: [0] },
  { argv: ['backup', '--to', '{bk}'], exits: [0] },
  { argv: ['backup', 'list', '--from', '{bk}'], exits: [0] },
  { argv: ['backup', 'verify', 'latest', '--from', '{bk}'], exits: [0] },
  { argv: ['restore', 'latest', '--from', '{bk}', '--dry-run'], exits: [0] },
  { argv: ['server', 'list', '--prefix', '{root}/srv'], exits: [0] },
  { argv: ['server', 'status', '--prefix', '{root}/srv'], exits: [0, 2, 4] },
];

/** The sandboxes of the terminal's runs and of the pipe's, which run side by side (one login per state dir). */
const sandboxes = new Map<boolean, Sandbox>();
beforeAll(() => {
  for (const tty of [true, false]) {
    const sb = makeSandbox();
    writeSettings(sb, { auth: { type: 'oauth-personal' } });
    addConversation(sb, 2);
    addConversation(sb, 3);
    sandboxes.set(tty, sb);
  }
});
afterAll(() => {
  for (const sb of sandboxes.values()) sb.cleanup();
});

const sandbox = (tty: boolean): Sandbox => sandboxes.get(tty)!;
const bkOf = (tty: boolean): string => path.join(sandbox(tty).root, 'bk');
const fill = (word: string, tty: boolean): string =>
  word.replace('{bk}', bkOf(tty)).replace('{root}', sandbox(tty).root);
/** The exit codes RUNS allows a seen run (its argv with either sandbox's paths filled in). */
const exitsOf = (s: Seen): number[] =>
  RUNS.find((run) => [true, false].some((tty) => run.argv.map((w) => fill(w, tty)).join(' ') === s.argv.join(' ')))
    ?.exits ?? [];

/** RUNS in one mode, from a fresh backup dir. */
function runAll(mode: ColourMode, tty: boolean): Promise<Seen[]> {
  fs.rmSync(bkOf(tty), { recursive: true, force: true });
  return runLines(
    sandbox(tty),
    RUNS.map((run) => ({ argv: run.argv.map((w) => fill(w, tty)), mode })),
    tty,
    170_000,
  );
}

const said = (seen: Seen[], word: string): string =>
  seen.find((s) => s.argv[0] === word && s.argv.length > 1 && s.argv[1]!.startsWith('-'))?.bytes.toString('utf8') ?? '';

describe('the control', () => {
  it('with colour allowed, the same runs write escapes on a terminal', async () => {
    const seen = await runAll(COLOUR_ALLOWED, true);
    expect(await waitNoProcesses(sandbox(true), 30_000)).toEqual([]);
    expect(seen.filter((s) => escapesIn(s.bytes).length > 0).map((s) => s.argv[0])).toEqual(
      expect.arrayContaining(['check', 'login', 'backup']),
    );
  }, 180_000);
});

describe.each(NO_COLOUR_MODES)('with %s', (mode) => {
  it('nothing has an escape sequence, on a pseudo-terminal (the paste prompt, its countdown, the progress bar) and on a pipe', async () => {
    const [tty, pipe] = await Promise.all([runAll(mode, true), runAll(mode, false)]);
    expect(problemsOf(tty, exitsOf)).toEqual([]);
    expect(problemsOf(pipe, exitsOf)).toEqual([]);
    // They were drawn on the terminal: the prompt with its countdown, and the bar, redrawn with carriage returns.
    expect(said(tty, 'login')).toMatch(/\[\ds left\] paste the address your browser ended on>/);
    expect(said(tty, 'backup')).toMatch(/\r\[[#-]+\] \d+\/2 sessions/);
    for (const dir of [bkOf(true), bkOf(false)]) expect(fs.readdirSync(dir)).toHaveLength(1);
    // The timed-out logins' supervisors and servers are gone before the next mode starts its own.
    for (const tty of [true, false]) expect(await waitNoProcesses(sandbox(tty), 30_000)).toEqual([]);
  }, 180_000);
});
