/**
 * With NO_COLOR=1, TERM=dumb or --no-color, nothing agyctl writes to a
 * terminal holds an escape sequence: not the paste prompt and its countdown,
 * not the QR code, not `login finish`'s prompt, not the "replace it? [y/N]"
 * question. Each runs on a real pseudo-terminal (`script`), and every byte
 * the terminal received is looked at. The prompts still ask and still read
 * the answer (the terminal's own line editing reads it).
 */
import fs from 'node:fs';
import { execa, type ResultPromise } from 'execa';
import { describe, expect, it } from 'vitest';
import { redirectFor } from '../../helpers/browser.js';
import { agyctl, BIN, makeSandbox, type Sandbox, waitNoProcesses } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

const MODES: Array<[string, NodeJS.ProcessEnv, string[]]> = [
  ['NO_COLOR=1', { NO_COLOR: '1', TERM: 'xterm-256color' }, []],
  ['TERM=dumb', { NO_COLOR: undefined, TERM: 'dumb' }, []],
  ['--no-color', { NO_COLOR: undefined, TERM: 'xterm-256color' }, ['--no-color']],
];

/** agyctl on a pseudo-terminal of 200×80 (the QR code fits), its stdin written through the terminal. */
function onTerminal(sb: Sandbox, env: NodeJS.ProcessEnv, args: string[]): { child: ResultPromise; seen(): string } {
  const quoted = args.map((a) => `'${a}'`).join(' ');
  const child = execa('script', ['-qec', `stty cols 200 rows 80; node ${BIN} ${quoted}`, '/dev/null'], {
    env: { ...sb.env, ...env },
    extendEnv: false,
    cwd: sb.root,
    stdin: 'pipe',
    reject: false,
    timeout: 60_000,
    buffer: true,
  });
  let seen = '';
  child.stdout?.on('data', (c: Buffer) => {
    seen += c.toString('utf8');
  });
  return { child, seen: () => seen };
}

/** Resolves with the first match of `re` in what the terminal showed (60 s at most, the child's own timeout). */
function waitFor(t: { child: ResultPromise; seen(): string }, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const look = (): boolean => {
      const m = re.exec(t.seen());
      if (m) resolve(m);
      return Boolean(m);
    };
    if (look()) return;
    t.child.stdout?.on('data', () => look());
    void t.child.then(() => {
      if (!look()) reject(new Error(`never shown: ${re}\n${t.seen()}`));
    });
  });
}

const ESC = '\x1b';

describe.each(MODES)('with %s, no escape sequence reaches the terminal', (_mode, env, flags) => {
  it('the paste prompt with its countdown, the QR code, and the question before replacing a credential', async () => {
    sandbox = makeSandbox();
    const login = onTerminal(sandbox, env, [...flags, 'login', '--qr', '--timeout', '40s']);
    const [url] = await waitFor(login, /https:\/\/accounts\.google\.com\/\S+/);
    await waitFor(login, /left\] paste the address your browser ended on> /);
    // The QR code is drawn with half blocks, in the same output.
    expect(login.seen()).toMatch(/[\u2580\u2584\u2588]{10}/);
    login.child.stdin?.write(`${redirectFor(url)}\r`);
    const r = await login.child;
    expect(r.exitCode, login.seen()).toBe(0);
    expect(login.seen()).toContain('a fresh server accepted the credentials');
    expect(
      JSON.stringify(
        login
          .seen()
          .split(ESC)
          .slice(1)
          .map((s) => s.slice(0, 12)),
      ),
    ).toBe('[]');

    const again = onTerminal(sandbox, env, [...flags, 'login', '--timeout', '30s']);
    await waitFor(again, /Sign in again and replace it\? \[y\/N\] /);
    again.child.stdin?.write('n\r');
    const no = await again.child;
    expect(no.exitCode, again.seen()).toBe(0);
    expect(again.seen()).toContain('Nothing changed');
    expect(again.seen()).not.toContain(ESC);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  }, 120_000);

  it("`login finish`'s prompt", async () => {
    sandbox = makeSandbox();
    const started = await agyctl(['login', '--detach', '--json', '--timeout', '40s'], sandbox);
    expect(started.exitCode, started.stderr).toBe(0);
    const url = /https:\/\/accounts\.google\.com\/[^"\s]+/.exec(started.stdout)?.[0];
    expect(url).toBeDefined();
    const finish = onTerminal(sandbox, env, [...flags, 'login', 'finish']);
    await waitFor(finish, /left\] paste the address your browser ended on> /);
    finish.child.stdin?.write(`${redirectFor(String(url))}\r`);
    const r = await finish.child;
    expect(r.exitCode, finish.seen()).toBe(0);
    expect(finish.seen()).not.toContain(ESC);
    // The login goes on to its end under its supervisor.
    expect(await waitNoProcesses(sandbox, 30_000)).toEqual([]);
    expect(fs.existsSync(`${sandbox.stateDir}/acp_token.json`)).toBe(true);
  }, 120_000);
});
