/**
 * `login status` from other terminals renders for each of them: a login
 * started with `--detach` (no terminal at all), then `login status` in two
 * tmux sessions of different widths. On each, every line agyctl wrote fits
 * that width unless it is one word that cannot be broken (the sign-in URL),
 * the URL stands whole, and the words are the piped output's.
 */
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, agyctl, makeSandbox, type Sandbox } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;
const servers: string[] = [];
afterEach(async () => {
  for (const name of servers.splice(0)) await execa('tmux', ['-L', name, 'kill-server'], { reject: false });
  // makeSandbox removes the HOME when the test ends; stop the pending login first.
  if (sandbox) await agyctl(['login', 'cancel'], sandbox);
  sandbox = undefined;
});

const DONE = '__status_done__';
/** The words, with the time left (which counts down between two runs) made equal. */
const words = (s: string): string[] =>
  s
    .replace(/\b\d+(m\d+)?s\s+left/g, 'N left')
    .split(/\s+/)
    .filter(Boolean);

/** What `agyctl login status` shows on a tmux pane of this width, wrapped lines joined back (capture-pane -J). */
async function statusOn(sb: Sandbox, columns: number): Promise<string[]> {
  const name = `agyctl-status-${process.pid}-${columns}`;
  servers.push(name);
  const tmux = (args: string[]) =>
    execa('tmux', ['-L', name, '-f', '/dev/null', ...args], { env: { ...sb.env, TERM: 'xterm' }, extendEnv: false });
  const command = `${[...AGYCTL_ARGV, 'login', 'status'].join(' ')}; echo ${DONE}; sleep 120`;
  await tmux(['new-session', '-d', '-x', String(columns), '-y', '50', '-c', sb.root, command]);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const pane = String((await tmux(['capture-pane', '-p', '-J'])).stdout);
    const lines = pane.split('\n').map((l) => l.trimEnd());
    const end = lines.indexOf(DONE);
    if (end >= 0) return lines.slice(0, end).filter((l) => l !== '');
    if (Date.now() > deadline) throw new Error(`login status did not finish on a ${columns}-column tmux pane: ${pane}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('login status on terminals of other sizes', () => {
  it('fits each terminal it runs on, whatever terminal started the login', async () => {
    const tmuxThere = await execa('tmux', ['-V'], { reject: false });
    expect(tmuxThere.exitCode, 'this test needs tmux (apt-get install tmux)').toBe(0);
    sandbox = makeSandbox({ AGY_SIM_LAUNCH: 'stdout' });
    const started = await agyctl(['login', '--detach', '--json', '--timeout', '5m'], sandbox);
    expect(started.exitCode, started.stderr).toBe(0);
    const url = String(JSON.parse(started.stdout.split('\n').find((l) => l.includes('"url"'))!).url);
    const piped = await agyctl(['login', 'status'], sandbox);
    expect(piped.exitCode, piped.stderr).toBe(0);

    const shown = new Map<number, string[]>();
    for (const columns of [64, 110]) {
      const lines = await statusOn(sandbox, columns);
      shown.set(columns, lines);
      expect(lines).toContain(url);
      for (const line of lines)
        if (Array.from(line).length > columns) expect(line, `wider than ${columns} columns`).not.toMatch(/\s/);
      expect(words(lines.join('\n'))).toEqual(words(`${piped.stdout}\n${piped.stderr}`));
    }
    // Broken where each terminal needs it: the narrow pane has more lines than the wide one.
    expect(shown.get(64)!.length).toBeGreaterThan(shown.get(110)!.length);
  });
});
