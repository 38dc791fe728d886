/**
 * What users paste is untrusted. The tunnel command agyctl prints is run in
 * a shell on the laptop; a code taken from a pasted URL is written to the
 * server's stdin. Neither may carry a second command.
 */
import { execFileSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../../src/cli/terminal/output.js';
import { parseCode } from '../../src/login/code-entry.js';
import { countdownPrompt, promptsOnTty, startPasteReader } from '../../src/login/paste.js';
import { defaultTunnelTarget, parseSshTarget, shellQuote, tunnelCommand } from '../../src/login/present.js';

/** What `sh` sees as words when the command is pasted (printf shows each argument on a line). */
function words(command: string): string[] {
  return execFileSync(
    'sh',
    ['-c', `set -- ${command.replace(/^ssh /, '')}; for a in "$@"; do printf '%s\\n' "$a"; done`],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n');
}

describe('the tunnel command', () => {
  it('puts -- before the destination and keeps plain targets readable', () => {
    expect(tunnelCommand(4000, parseSshTarget('ops@box:2222')!)).toBe(
      'ssh -N -L 4000:127.0.0.1:4000 -o ExitOnForwardFailure=yes -p 2222 -- ops@box',
    );
    expect(tunnelCommand(4000, parseSshTarget('[fe80::1%eth0]')!)).toBe(
      'ssh -N -L 4000:127.0.0.1:4000 -o ExitOnForwardFailure=yes -- fe80::1%eth0',
    );
  });

  it('refuses shell syntax inside brackets, a leading dash and non-host characters', () => {
    for (const bad of [
      '[a;touch pwned #]',
      '[::1]`id`',
      'box;cmd',
      'box$(id)',
      '-oProxyCommand=x',
      'ops@-oProxyCommand=x',
      '-x@box',
      '[a b]',
      "[::1]'",
    ]) {
      expect(parseSshTarget(bad), bad).toBeUndefined();
    }
  });

  it('quotes a user name from $USER and ignores a crafted SSH_CONNECTION', () => {
    const cmd = tunnelCommand(
      4000,
      defaultTunnelTarget({ USER: 'x;id', SSH_CONNECTION: '10.0.0.5 51000 10.0.0.9 22' }),
    );
    expect(cmd).toBe("ssh -N -L 4000:127.0.0.1:4000 -o ExitOnForwardFailure=yes -- 'x;id@10.0.0.9'");
    expect(words(cmd).at(-1)).toBe('x;id@10.0.0.9');
    const crafted = defaultTunnelTarget({ USER: 'me', SSH_CONNECTION: '10.0.0.5 51000 a;touch${IFS}pwned 22' });
    expect(crafted.host).not.toContain(';');
    expect(words(tunnelCommand(4000, { user: "o'brien", host: 'box', port: undefined })).at(-1)).toBe("o'brien@box");
  });

  it('shellQuote leaves safe words alone and single-quotes the rest', () => {
    expect(shellQuote('me@box.example.com')).toBe('me@box.example.com');
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
    expect(shellQuote('')).toBe("''");
  });
});

describe('a code taken from a pasted URL', () => {
  it('passes the same strict check as a bare code (no newline smuggling a JSON-RPC request)', () => {
    const url =
      'https://codeassist.google.com/authcode?code=abc%0A%7B%22jsonrpc%22%3A%222.0%22%2C%22id%22%3A99%2C%22method%22%3A%22logout%22%7D&state=s1';
    expect(parseCode(url, 's1').ok).toBe(false);
    expect(parseCode('https://codeassist.google.com/authcode?code=ab%20cd&state=s1', 's1').ok).toBe(false);
    expect(parseCode('https://codeassist.google.com/authcode?code=4%2F0Xyz&state=s1', 's1')).toEqual({
      ok: true,
      value: '4/0Xyz',
    });
  });
});

describe('the countdown prompt', () => {
  it('shows whole seconds, rounded up, never "979ms"', () => {
    const now = 1_000_000;
    expect(countdownPrompt('paste it', now + 979, now)).toBe('[1s left] paste it> ');
    expect(countdownPrompt('paste it', now + 61_200, now)).toBe('[1m02s left] paste it> ');
    expect(countdownPrompt('paste it', now - 5, now)).toBe('[0s left] paste it> ');
    expect(countdownPrompt('paste it', undefined, now)).toBe('paste it> ');
  });

  it('draws the prompt only when stdin and stderr are both terminals (not in `login 2>&1 | tee`)', () => {
    const io = (stdin: boolean, stderr: boolean) =>
      ({ ctx: { stdin: { isTTY: stdin }, stderr: { isTTY: stderr } } }) as unknown as Parameters<
        typeof promptsOnTty
      >[0];
    expect(promptsOnTty(io(true, true))).toBe(true);
    expect(promptsOnTty(io(true, false))).toBe(false);
    expect(promptsOnTty(io(false, true))).toBe(false);
  });

  afterEach(() => void vi.useRealTimers());

  /** A reader on fake terminals: what it draws on stderr, as text. */
  function ttyReader(prompt: Parameters<typeof startPasteReader>[1], escapes = true) {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin });
    const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
    let raw = '';
    stderr.on('data', (d: Buffer) => {
      raw += d.toString();
    });
    const out = new Output(stdin as never, stderr as never, { json: false, color: escapes, verbose: false });
    const io = { ctx: { stdin, stderr }, out } as unknown as Parameters<typeof startPasteReader>[0];
    const reader = startPasteReader(io, prompt, () => undefined);
    return { reader, stdin, raw: () => raw, drawn: () => raw.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '') };
  }

  it('with colour off writes no escape sequence: drawn once as a status line, again after a line, gone when closed', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { reader, stdin, raw } = ttyReader({ text: () => 'paste it', deadline: () => 1_000_000 + 10_000 }, false);
    await vi.advanceTimersByTimeAsync(3_000);
    // No countdown ticks: a redraw would cover what the terminal is echoing.
    expect(raw()).toBe('\r[10s left] paste it> ');
    stdin.write('not it\n');
    await vi.advanceTimersByTimeAsync(0);
    expect(raw()).toContain('\r[7s left] paste it> ');
    reader.close();
    expect(raw()).not.toContain('\u001b');
    expect(raw().endsWith('\r')).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts down by itself, once a second, while it has a deadline, and stops when closed', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { reader, drawn } = ttyReader({ text: () => 'paste it', deadline: () => 1_000_000 + 10_000 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(drawn()).toContain('[10s left] paste it> ');
    expect(drawn()).toContain('[9s left] paste it> ');
    expect(drawn()).toContain('[8s left] paste it> ');
    reader.close();
    const before = drawn();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(drawn()).toBe(before);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('draws a prompt without a deadline once, with no countdown and no timer', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { reader, drawn } = ttyReader({ text: () => 'paste it' });
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(drawn()).toContain('paste it> ');
    expect(drawn()).not.toContain('left]');
    reader.close();
  });
});
