/**
 * Output on an 80-column terminal (a pseudo-terminal from script(1), as a
 * person's tmux at 80x24): stdout lines of check and settings show are
 * broken at spaces, never mid-word by the terminal, and say the same words
 * as the piped output (which a pipe gets whole).
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, agyctl, makeSandbox, type Sandbox } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

/** The words, with timings (`(11ms)`) that differ from run to run made equal. */
const words = (s: string): string[] =>
  s
    .replace(/\(\d+ms\)/g, '(Nms)')
    .split(/\s+/)
    .filter(Boolean);

describe('on an 80-column terminal', () => {
  it.each([[['check']], [['settings', 'show']]])('%j breaks its lines at spaces, within 80 columns', async (argv) => {
    sandbox = makeSandbox();
    const cmd = [...AGYCTL_ARGV, ...argv].join(' ');
    const tty = await execa('script', ['-qec', `stty cols 80; ${cmd} 2>/dev/null`, '/dev/null'], {
      env: sandbox.env,
      extendEnv: false,
      cwd: sandbox.root,
      reject: false,
      timeout: 45_000,
    });
    const piped = await agyctl(argv, sandbox);
    const shown = String(tty.stdout).replace(/\r\n/g, '\n');
    expect(words(piped.stdout).some((w) => w.length > 1)).toBe(true);
    // Some line of the piped output is longer than the terminal: the test is about wrapping it.
    expect(piped.stdout.split('\n').some((l) => Array.from(l).length > 80)).toBe(true);
    for (const line of shown.split('\n')) expect(Array.from(line).length, line).toBeLessThanOrEqual(80);
    expect(words(shown)).toEqual(words(piped.stdout));
  });
});
