/**
 * `npm run demo` is the first thing a new user sees: every
 * label ("Open this URL…:", "First run this…:") has its value on the next
 * line, in a pipe (2>&1) and on a terminal (a pty from script(1)).
 */
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../../src/util/terminal-text.js';
import { ROOT } from '../../helpers/cli.js';

const DEMO = path.join(ROOT, 'scripts', 'demo.mjs');
const env = { PATH: process.env.PATH, TERM: 'dumb', NO_COLOR: '1' };

/** Each label's next non-empty line, for every time the label appears. */
function valuesAfter(lines: string[], label: string): string[] {
  return lines.flatMap((l, i) => (l.startsWith(label) ? [lines.slice(i + 1).find((n) => n.trim() !== '') ?? ''] : []));
}

function expectInOrder(transcript: string): void {
  const lines = stripAnsi(transcript).split(/\r?\n/);
  const urls = valuesAfter(lines, 'Open this URL in a browser on your laptop:');
  const tunnels = valuesAfter(lines, 'First run this on your laptop and leave it running:');
  expect(urls.length, transcript).toBe(2); // the login, and the detached login
  for (const u of urls) expect(u).toMatch(/^https:\/\/accounts\.google\.com\//);
  expect(tunnels.length).toBe(2);
  for (const t of tunnels) expect(t).toMatch(/^ssh -N -L \d+:127\.0\.0\.1:\d+ /);
}

/** Runs the demo to completion under `command` (a shell for the pipe, script(1) for a pty); stdout is all it showed. */
async function demoThrough(command: string, args: string[]): Promise<string> {
  const r = await execa(command, args, { env, extendEnv: false, reject: false, timeout: 120_000, stdin: 'ignore' });
  expect(r.exitCode, String(r.stdout)).toBe(0);
  return String(r.stdout);
}

describe('the demo reads in order', () => {
  it('in a pipe (stdout and stderr together)', async () => {
    expectInOrder(await demoThrough('/bin/sh', ['-c', 'exec node "$0" 2>&1', DEMO]));
  });

  it('on a terminal', async () => {
    expectInOrder(await demoThrough('script', ['-qfec', `exec node ${DEMO}`, '/dev/null']));
  });
});
