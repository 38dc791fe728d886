import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatBytes, Progress } from '../../src/cli/commands/backup/progress.js';
import { Output } from '../../src/cli/terminal/output.js';

function stream(isTTY: boolean): Writable & { isTTY: boolean; text: () => string } {
  let text = '';
  const s = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      cb();
    },
  }) as Writable & { isTTY: boolean; text: () => string };
  s.isTTY = isTTY;
  s.text = () => text;
  return s;
}

describe('backup progress', () => {
  it('draws sessions and bytes on a TTY, and ends with the line cleared', () => {
    const err = stream(true);
    const out = new Output(stream(false), err, { json: false, color: true, verbose: false });
    const p = new Progress(out, 2, 3 * 1024 * 1024);
    p.start('first');
    p.advance(1024 * 1024, 'first');
    p.advance(2 * 1024 * 1024, 'second');
    p.finish();
    expect(err.text()).toContain('0/2 sessions');
    expect(err.text()).toContain('2/2 sessions  3.0 MB/3.0 MB');
    expect(err.text()).toContain('[########################]');
    expect(err.text().endsWith('\r\x1b[2K')).toBe(true);
  });

  it('writes nothing when stderr is not a TTY', () => {
    const err = stream(false);
    const out = new Output(stream(false), err, { json: false, color: false, verbose: false });
    const p = new Progress(out, 1, 10);
    p.start('x');
    p.advance(10, 'x');
    p.finish();
    expect(err.text()).toBe('');
  });

  it('formats sizes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(200 * 1024 * 1024)).toBe('200 MB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GB');
  });
});
