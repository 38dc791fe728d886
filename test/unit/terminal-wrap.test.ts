/** Prose wrapped at word boundaries and status lines cut to the terminal's width (80 and 100 columns). */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from '../../src/cli/terminal/output.js';
import { visibleWidth, wrapProse } from '../../src/cli/terminal/wrap.js';

function terminal(columns: number): { stream: PassThrough & { isTTY: boolean; columns: number }; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns });
  let text = '';
  stream.on('data', (c: Buffer) => {
    text += c.toString('utf8');
  });
  return { stream, text: () => text };
}

const PROSE =
  'The login goes on in the background (supervisor pid 29095) until 2026-12-03T09:02:55.374Z; after signing in, run `agyctl login finish` with the address your browser ended on, then `agyctl login status --wait`.';

describe('prose on a terminal', () => {
  it.each([80, 100])('breaks at spaces at %i columns: no line is longer, no word is cut', (columns) => {
    const err = terminal(columns);
    const out = new Output(terminal(columns).stream, err.stream, { json: false, color: false, verbose: false });
    out.info(PROSE);
    out.warn(PROSE);
    out.error(PROSE, PROSE);
    const lines = err.text().trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(columns);
    const words = (s: string) => s.split(/\s+/).filter(Boolean);
    expect(words(err.text())).toEqual([
      ...words(PROSE),
      'warning:',
      ...words(PROSE),
      'error:',
      ...words(PROSE),
      'hint:',
      ...words(PROSE),
    ]);
  });

  it('leaves text to copy, and anything not on a terminal, as it is', () => {
    const url = `https://accounts.google.com/o/oauth2/v2/auth?${'x'.repeat(300)}`;
    expect(wrapProse(url, 80)).toBe(url);
    const err = terminal(80);
    const out = new Output(terminal(80).stream, err.stream, { json: false, color: false, verbose: false });
    const command = `ssh -N -L 41681:127.0.0.1:41681 -o ExitOnForwardFailure=yes -- ${'a'.repeat(30)}@build-box.example.com`;
    out.info(command, { verbatim: true });
    expect(err.text()).toBe(`${command}\n`);
    const pipe = Object.assign(new PassThrough(), { isTTY: false });
    let piped = '';
    pipe.on('data', (c: Buffer) => {
      piped += c.toString('utf8');
    });
    new Output(pipe, pipe, { json: false, color: false, verbose: false }).info(PROSE);
    expect(piped).toBe(`${PROSE}\n`);
  });
});

describe('status lines (progress)', () => {
  it.each([80, 100])(
    'are cut to fit %i columns, so a redraw overwrites the line instead of stacking a new one',
    (columns) => {
      const err = terminal(columns);
      const out = new Output(terminal(columns).stream, err.stream, { json: false, color: true, verbose: false });
      const bar = `[${'#'.repeat(15)}${'-'.repeat(15)}] 2/3 sessions  120 KB/180 KB  4f7d9f9f-72b0-472d-939a-5bcca575c03b`;
      out.status(bar);
      const drawn = err.text().replace('\r\x1b[2K', '');
      expect(visibleWidth(drawn)).toBeLessThan(columns);
      expect(drawn.startsWith(bar.slice(0, 40))).toBe(true);
    },
  );
});

describe('with colour off (NO_COLOR, TERM=dumb, --no-color)', () => {
  it('progress and its clearing write no escape sequence: a carriage return and spaces redraw the line', () => {
    const err = terminal(80);
    const out = new Output(terminal(80).stream, err.stream, { json: false, color: false, verbose: false });
    const [first, second] = ['[#####-----] 1/2 sessions  a longer line', '[##########] 2/2'];
    out.status(first);
    out.status(second);
    out.clearStatus();
    out.info('done');
    const text = err.text();
    expect(text).not.toContain('\x1b');
    const blank = ' '.repeat(first.length - second.length);
    expect(text).toBe(`\r${first}\r${second}${blank}\r${' '.repeat(second.length)}\rdone\n`);
  });
});

describe('--verbose and an internal error', () => {
  it('prints the error once, then its stack frames as they are', async () => {
    const { reportError } = await import('../../src/cli/main.js');
    const { toAgyError } = await import('../../src/core/errors.js');
    const err = terminal(80);
    const out = new Output(terminal(80).stream, err.stream, { json: false, color: false, verbose: true });
    const bug = new Error('boom: something agyctl did not expect went wrong in the middle of a long line');
    expect(reportError(toAgyError(bug), out, false)).toBe(1);
    const text = err.text();
    expect(text.match(/boom/g)).toHaveLength(1);
    expect(text.startsWith('error: Internal error: boom')).toBe(true);
    const frames = text.split('\n').filter((l) => /^\s+at /.test(l));
    expect(frames.length).toBeGreaterThan(0);
    expect(frames).toEqual(
      String(bug.stack)
        .split('\n')
        .filter((l) => /^\s+at /.test(l)),
    );
  });
});
