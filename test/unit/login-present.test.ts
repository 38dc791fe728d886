/**
 * How a sign-in URL is laid out for a person: each label has its value
 * under it on the terminal, even when stdout is piped away (as by `npm run demo`),
 * and the paste hint names where an address can really go.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { pasteWhere } from '../../src/cli/commands/login/printers.js';
import { labelled, Output } from '../../src/cli/terminal/output.js';
import type { CommandIO, TtyWritable } from '../../src/core/io.js';

function stream(isTTY: boolean): { s: TtyWritable; text: () => string } {
  const s = Object.assign(new PassThrough(), { isTTY });
  let text = '';
  s.on('data', (c: Buffer) => (text += c.toString()));
  return { s, text: () => text };
}

function ioWith(stdoutTty: boolean, stderrTty: boolean) {
  const out = stream(stdoutTty);
  const err = stream(stderrTty);
  const io = { out: new Output(out.s, err.s, { json: false, color: false, verbose: false }) } as unknown as CommandIO;
  return { io, stdout: out.text, stderr: err.text };
}

describe('labelled values', () => {
  it('stdout piped, stderr a terminal: the value shows under its label on the terminal and goes to the pipe', async () => {
    const t = ioWith(false, true);
    labelled(t.io, 'Open this URL:', 'https://example.test/a');
    await new Promise((r) => setImmediate(r));
    expect(t.stderr()).toBe('Open this URL:\nhttps://example.test/a\n');
    expect(t.stdout()).toBe('https://example.test/a\n');
  });

  it('both on a terminal, or both piped: the value is written once, on stdout', async () => {
    for (const [o, e] of [
      [true, true],
      [false, false],
    ] as const) {
      const t = ioWith(o, e);
      labelled(t.io, 'Open this URL:', 'https://example.test/a');
      await new Promise((r) => setImmediate(r));
      expect(t.stderr()).toBe('Open this URL:\n');
      expect(t.stdout()).toBe('https://example.test/a\n');
    }
  });
});

describe('paste hint', () => {
  it('names login finish when this command cannot read a paste', () => {
    expect(pasteWhere({})).toBe('paste it here');
    expect(pasteWhere({ stdinPastes: true })).toBe('paste it here');
    expect(pasteWhere({ stdinPastes: false })).toBe('give it to `agyctl login finish` in another shell');
    expect(pasteWhere({ detached: true, stdinPastes: true })).toBe('give it to `agyctl login finish`');
  });
});
