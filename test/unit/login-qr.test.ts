// login --qr against the terminal it is drawn on: the half-block code of a
// real sign-in URL is drawn only when it fits in width and, with the URL,
// the tunnel command and the prompt under it, in height; otherwise one note
// names the size it needs. The URL and the tunnel command always follow it.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  fitQr,
  lineWidth,
  loginPrinter,
  pasteWhere,
  qrLines,
  type Screen,
  screenOf,
  wrappedRows,
} from '../../src/cli/commands/login/printers.js';
import { Output } from '../../src/cli/terminal/output.js';
import type { CommandIO, TtyWritable } from '../../src/core/io.js';
import { codeEntryEvent, loopbackUrlEvent } from '../../src/login/present.js';
import { type AuthUrl, validateAuthUrl } from '../../src/profiles/auth-url.js';
import { buildAuthUrl } from '../../src/sim/oauth.js';

// The simulator builds the URL as RC01 showed it: state of 32 hex digits, a 43-character PKCE challenge.
const URL_TEXT = buildAuthUrl(35293, '/', '0123456789abcdef0123456789abcdef', 'c'.repeat(43));
const AUTH = (validateAuthUrl(URL_TEXT) as { value: AuthUrl }).value;
const TARGET = { user: 'ops', host: 'box.example.com', port: 2222 };
const TUNNEL = 'ssh -N -L 35293:127.0.0.1:35293 -o ExitOnForwardFailure=yes -p 2222 -- ops@box.example.com';
const QR_LINE = /^[█▀▄ ]+$/;

const tty = (columns: number, rows: number): Screen => ({ tty: true, size: { columns, rows } });

/** stdout and stderr on one terminal of this size (or a pipe when size is undefined): what a person sees, in order. */
function terminal(size: { columns: number; rows: number } | undefined, json = false) {
  const chunks: string[] = [];
  const stream = (): TtyWritable =>
    Object.assign(
      new Writable({
        write(chunk, _enc, cb) {
          chunks.push(String(chunk));
          cb();
        },
      }),
      size ? { isTTY: true, ...size } : {},
    );
  const stdout = stream();
  const stderr = stream();
  const io = {
    ctx: { env: {}, cwd: '/', stdout, stderr, signal: new AbortController().signal },
    out: new Output(stdout, stderr, { json, color: false, verbose: false }),
  } as unknown as CommandIO;
  return { io, lines: () => chunks.join('').replace(/\n$/, '').split('\n') };
}

/** The login's printer, as the supervisor builds it for `login --qr`. */
const printerOf = (io: CommandIO) =>
  loginPrinter(io.out as Output, { qr: true, pasteWhere: pasteWhere({}), stderr: io.ctx.stderr });
const present = (io: CommandIO) => printerOf(io).show(loopbackUrlEvent(AUTH, { target: TARGET }));
const presentCodeEntry = (io: CommandIO) => printerOf(io).show(codeEntryEvent(AUTH, undefined));

describe('the QR code of a real sign-in URL', () => {
  it('is wider than 80 columns and taller than 40 rows (so it must be fitted)', async () => {
    const code = await qrLines(URL_TEXT);
    expect(URL_TEXT.length).toBeGreaterThan(400);
    expect(Math.max(...code.map(lineWidth))).toBeGreaterThan(80);
    expect(code.length).toBeGreaterThan(40);
    expect(code.every((l) => QR_LINE.test(l))).toBe(true);
  });
});

describe('fitQr', () => {
  const after = ['Open this URL in a browser on your laptop:', URL_TEXT, 'First run this on your laptop:', TUNNEL];

  it.each([
    [80, 24],
    [120, 40],
  ])('%i×%i: left out, with a note that names the size needed and fits the width', async (columns, rows) => {
    const code = await qrLines(URL_TEXT);
    const fit = fitQr(code, tty(columns, rows), after);
    expect(fit.draw).toBe(false);
    if (fit.draw) return;
    const width = Math.max(...code.map(lineWidth));
    expect(fit.note).toContain(`needs ${width}×${code.length + wrappedRows(after, width) + 1}`);
    expect(fit.note).toContain(`terminal is ${columns}×${rows}`);
    expect(lineWidth(fit.note)).toBeLessThanOrEqual(80);
  });

  it('200×60: drawn', async () => {
    expect(fitQr(await qrLines(URL_TEXT), tty(200, 60), after)).toEqual({ draw: true });
  });

  it('the size the note names fits exactly: one row or one column fewer does not', async () => {
    const code = await qrLines(URL_TEXT);
    const note = (fitQr(code, tty(80, 24), after) as { note: string }).note;
    const [, w, h] = /needs (\d+)×(\d+)/.exec(note)!.map(Number) as [number, number, number];
    expect(fitQr(code, tty(w, h), after).draw).toBe(true);
    expect(fitQr(code, tty(w, h - 1), after).draw).toBe(false);
    expect(fitQr(code, tty(w - 1, h + 20), after).draw).toBe(false);
  });

  it('a long line under the code counts as the rows it wraps into', () => {
    const code = ['██', '██'];
    expect(fitQr(code, tty(10, 4), ['x'.repeat(10)]).draw).toBe(true);
    expect(fitQr(code, tty(10, 4), ['x'.repeat(11)]).draw).toBe(false);
    expect(wrappedRows(['', 'x'.repeat(21), '\x1b[1mbold\x1b[22m'], 10)).toBe(1 + 3 + 1);
  });

  it('a terminal of unknown size: left out; not a terminal (a pipe): drawn, nothing wraps there', async () => {
    const code = await qrLines(URL_TEXT);
    const unknown = fitQr(code, { tty: true, size: undefined }, after);
    expect(unknown).toMatchObject({ draw: false, note: expect.stringMatching(/size unknown/) });
    expect(fitQr(code, { tty: false, size: undefined }, after)).toEqual({ draw: true });
  });

  it('reads the size from the stream, only when it is a positive whole number', () => {
    const s = (o: object) => Object.assign(new Writable(), o) as TtyWritable;
    expect(screenOf(s({ isTTY: true, columns: 120, rows: 40 }))).toEqual(tty(120, 40));
    expect(screenOf(s({ isTTY: true, columns: 0, rows: 40 }))).toEqual({ tty: true, size: undefined });
    expect(screenOf(s({}))).toEqual({ tty: false, size: undefined });
  });
});

describe('login --qr on a terminal', () => {
  it('200×60: the code first, then the URL and the tunnel command; no code line is wider than the terminal', async () => {
    const t = terminal({ columns: 200, rows: 60 });
    await present(t.io);
    const lines = t.lines();
    const qr = lines.filter((l) => QR_LINE.test(l));
    expect(qr.length).toBeGreaterThan(40);
    expect(qr.every((l) => lineWidth(l) <= 200)).toBe(true);
    const lastQr = lines.findLastIndex((l) => QR_LINE.test(l));
    expect(lines.indexOf(URL_TEXT)).toBeGreaterThan(lastQr);
    expect(lines.indexOf(TUNNEL)).toBeGreaterThan(lastQr);
    // All of it, with the prompt under it, is on the screen at once.
    expect(wrappedRows(lines, 200) + 1).toBeLessThanOrEqual(60);
  });

  it.each([
    [80, 24],
    [120, 40],
  ])('%i×%i: one note instead of the code, then the URL and the tunnel command', async (columns, rows) => {
    const t = terminal({ columns, rows });
    await present(t.io);
    const lines = t.lines();
    expect(lines.filter((l) => QR_LINE.test(l))).toEqual([]);
    expect(lines[0]).toMatch(new RegExp(`^QR code left out \\(needs \\d+×\\d+, terminal is ${columns}×${rows}\\)`));
    expect(lineWidth(lines[0]!)).toBeLessThanOrEqual(columns);
    expect(lines.filter((l) => /QR/.test(l))).toHaveLength(1);
    expect(lines).toContain(URL_TEXT);
    expect(lines).toContain(TUNNEL);
  });

  it('piped: the code is drawn, before the URL', async () => {
    const t = terminal(undefined);
    await present(t.io);
    const lines = t.lines();
    expect(lines.filter((l) => QR_LINE.test(l)).length).toBeGreaterThan(40);
    expect(lines.indexOf(URL_TEXT)).toBeGreaterThan(lines.findLastIndex((l) => QR_LINE.test(l)));
  });

  it('--json: never a code, one note on stderr, stdout only the url event', async () => {
    const t = terminal({ columns: 200, rows: 60 }, true);
    await present(t.io);
    const lines = t.lines();
    expect(lines.filter((l) => QR_LINE.test(l))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).event)).toEqual(['url']);
    expect(lines.filter((l) => !l.startsWith('{'))).toEqual(['QR code left out: --json prints no QR code.']);
  });

  it('code entry: the same fit, the code above the URL', async () => {
    const big = terminal({ columns: 200, rows: 60 });
    await presentCodeEntry(big.io);
    const lines = big.lines();
    expect(lines.filter((l) => QR_LINE.test(l)).length).toBeGreaterThan(40);
    expect(lines.indexOf(URL_TEXT)).toBeGreaterThan(lines.findLastIndex((l) => QR_LINE.test(l)));
    const small = terminal({ columns: 80, rows: 24 });
    await presentCodeEntry(small.io);
    expect(small.lines()[0]).toMatch(/^QR code left out \(needs \d+×\d+, terminal is 80×24\)/);
    expect(small.lines().filter((l) => QR_LINE.test(l))).toEqual([]);
  });
});
