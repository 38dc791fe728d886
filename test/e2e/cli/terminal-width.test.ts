/**
 * Output on an 80-column terminal (a pseudo-terminal from script(1), as a
 * person's tmux at 80x24): stdout lines of check, settings show, restore and
 * sessions export are broken at spaces, never mid-word by the terminal (a
 * path longer than a line stands alone on one), and say the same words as
 * the piped output (which a pipe gets whole).
 */

import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, agyctl, makeSandbox, parseJson, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

let sandbox: Sandbox | undefined;

/** The words, with timings (`(11ms)`) that differ from run to run made equal. */
const words = (s: string): string[] =>
  s
    .replace(/\(\d+ms\)/g, '(Nms)')
    .split(/\s+/)
    .filter(Boolean);

/** A long directory name, as people give them: the export's lines pass 80 columns. */
const EXPORT = 'conversations-exported-for-the-review-of-the-first-hour';

/** A sandbox with two conversations and a snapshot of them in `bk`: for the commands that read snapshots. */
async function withSnapshot(): Promise<Sandbox> {
  const sb = authedSandbox();
  addConversation(sb, 1);
  addConversation(sb, 2);
  const r = await agyctl(['backup', '--to', path.join(sb.root, 'bk'), '--json'], sb);
  expect(r.exitCode, r.stderr).toBe(0);
  expect((parseJson(r.stdout) as { ok: boolean }).ok).toBe(true);
  return sb;
}

describe('on an 80-column terminal', () => {
  it.each([
    [['check'], false],
    [['settings', 'show'], false],
    [['restore', 'latest', '--from', 'bk', '--dry-run'], true],
    [['sessions', 'export', 'latest', '--from', 'bk', '--out', EXPORT], true],
  ])('%j breaks its lines at spaces, within 80 columns', async (argv, snapshot) => {
    sandbox = snapshot ? await withSnapshot() : makeSandbox();
    const cmd = [...AGYCTL_ARGV, ...argv].join(' ');
    const tty = await execa('script', ['-qec', `stty cols 80; ${cmd} 2>/dev/null`, '/dev/null'], {
      env: sandbox.env,
      extendEnv: false,
      cwd: sandbox.root,
      reject: false,
      timeout: 45_000,
    });
    fs.rmSync(path.join(sandbox.root, EXPORT), { recursive: true, force: true }); // an export never overwrites
    const piped = await agyctl(argv, sandbox);
    const shown = String(tty.stdout).replace(/\r\n/g, '\n');
    expect(words(piped.stdout).some((w) => w.length > 1)).toBe(true);
    // Some line of the piped output is longer than the terminal: the test is about wrapping it.
    expect(piped.stdout.split('\n').some((l) => Array.from(l).length > 80)).toBe(true);
    // A word longer than the line (a long path) cannot break at a space: it stands on a line of its own.
    for (const line of shown.split('\n')) if (Array.from(line).length > 80) expect(line.trim(), line).not.toMatch(/\s/);
    expect(words(shown)).toEqual(words(piped.stdout));
  });
});
