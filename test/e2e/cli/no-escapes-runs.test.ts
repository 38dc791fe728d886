/**
 * With NO_COLOR=1, with TERM=dumb and with --no-color, the commands' main
 * runs write no escape sequence, on a pseudo-terminal and on a pipe, in each
 * of the three modes: every command the simulator makes cheap (RUNS),
 * --verbose, the login's paste prompt with its countdown and backup's
 * progress bar included. On a terminal with colour allowed the same runs
 * write escapes (the control). The prompts' answers (login, login finish,
 * the replace question) are driven in prompts-no-escapes.test.ts; every
 * command's --help and usage error in no-escapes-help-tree.test.ts.
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
  { argv: ['--verbose', 'check'], exits: [3] },
  { argv: ['check', '--live'], exits: [3] },
  { argv: ['probe'], exits: [0] },
  { argv: ['login', '--timeout', '5s'], exits: [5] },
  { argv: ['login', 'status'], exits: [0, 2] },
  { argv: ['sessions'], exits: [0] },
  { argv: ['backup', '--to', '{bk}'], exits: [0] },
  { argv: ['backup', 'list', '--from', '{bk}'], exits: [0] },
  { argv: ['backup', 'verify', 'latest', '--from', '{bk}'], exits: [0] },
  { argv: ['restore', 'latest', '--from', '{bk}', '--dry-run'], exits: [0] },
  // Each conversation fails to load in a signed-out server: the FAILED lines and exit 6.
  { argv: ['sessions', 'export', 'latest', '--from', '{bk}', '--out', '-'], exits: [6] },
  // Nothing listens on port 1: ssh fails at once (exit 4).
  { argv: ['connect', '127.0.0.1', '--ssh-option', 'Port=1', '--timeout', '10s'], exits: [4] },
  { argv: ['server', 'list', '--prefix', '{root}/srv'], exits: [0] },
  { argv: ['server', 'status', '--prefix', '{root}/srv'], exits: [0, 2, 4] },
  { argv: ['logout'], exits: [0] },
];

/**
 * A sandbox for each list of runs, made before the lists run side by side (one login per state dir) and
 * removed after them all: a sandbox made in a concurrent test would be tied to whichever test is current.
 */
const sandboxes: Sandbox[] = [];
beforeAll(() => {
  for (let i = 0; i < 2 * NO_COLOUR_MODES.length + 1; i++) {
    const sb = makeSandbox();
    writeSettings(sb, { auth: { type: 'oauth-personal' } });
    addConversation(sb, 2);
    addConversation(sb, 3);
    sandboxes.push(sb);
  }
});
afterAll(() => {
  for (const sb of sandboxes) sb.cleanup();
});

const bkOf = (sb: Sandbox): string => path.join(sb.root, 'bk');
const fill = (word: string, sb: Sandbox): string => word.replace('{bk}', bkOf(sb)).replace('{root}', sb.root);

/** RUNS in a sandbox of their own, in one mode; the sandbox's processes are gone when it returns. */
async function runAll(sb: Sandbox, mode: ColourMode, tty: boolean): Promise<{ seen: Seen[]; sb: Sandbox }> {
  const seen = await runLines(
    sb,
    RUNS.map((run) => ({ argv: run.argv.map((w) => fill(w, sb)), mode })),
    tty,
    170_000,
  );
  // The timed-out login's supervisor and server, the probes' servers: nothing is left running.
  expect(await waitNoProcesses(sb, 30_000)).toEqual([]);
  return { seen, sb };
}

/** The exit codes RUNS allows a seen run. */
const exitsOf =
  (sb: Sandbox) =>
  (s: Seen): number[] =>
    RUNS.find((run) => run.argv.map((w) => fill(w, sb)).join(' ') === s.argv.join(' '))?.exits ?? [];

const said = (seen: Seen[], word: string): string =>
  seen.find((s) => s.argv[0] === word && s.argv.length > 1 && s.argv[1]!.startsWith('-'))?.bytes.toString('utf8') ?? '';

// Each list has its sandbox: they run side by side (most of their time is waiting on servers and timeouts).
describe.concurrent('main runs', () => {
  it('the control: with colour allowed, the same runs write escapes on a terminal', async () => {
    const { seen } = await runAll(sandboxes[0]!, COLOUR_ALLOWED, true);
    expect(
      seen.filter((s) => escapesIn(s.bytes).length > 0).map((s) => s.argv.find((w) => !w.startsWith('-'))),
    ).toEqual(expect.arrayContaining(['check', 'login', 'backup']));
  }, 180_000);

  for (const [n, mode] of NO_COLOUR_MODES.entries()) {
    it(`with ${mode.name}, nothing has an escape sequence on a pseudo-terminal: the paste prompt, its countdown, the progress bar`, async () => {
      const { seen, sb } = await runAll(sandboxes[1 + 2 * n]!, mode, true);
      expect(problemsOf(seen, exitsOf(sb))).toEqual([]);
      // They were drawn: the prompt with its countdown, and the bar, redrawn with carriage returns.
      expect(said(seen, 'login')).toMatch(/\[\ds left\] paste the address your browser ended on>/);
      expect(said(seen, 'backup')).toMatch(/\r\[[#-]+\] \d+\/2 sessions/);
      expect(fs.readdirSync(bkOf(sb))).toHaveLength(1);
    }, 180_000);

    it(`with ${mode.name}, nothing has an escape sequence on a pipe`, async () => {
      const { seen, sb } = await runAll(sandboxes[2 + 2 * n]!, mode, false);
      expect(problemsOf(seen, exitsOf(sb))).toEqual([]);
      expect(fs.readdirSync(bkOf(sb))).toHaveLength(1);
    }, 180_000);
  }
});
