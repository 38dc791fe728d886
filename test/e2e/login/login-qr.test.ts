/**
 * `agyctl login --qr` on a real terminal (a pty from script(1), sized with
 * stty), end to end on the built binary: the code reaches the login through
 * its supervisor, which has no terminal of its own and fits the code to the
 * size the starting agyctl saw. The test plays the browser as login.test.ts.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../../src/util/terminal-text.js';
import { httpGet, redirectFor } from '../../helpers/browser.js';
import { BIN, makeSandbox, type Sandbox, waitNoProcesses } from '../../helpers/cli.js';
import { decodeQr, hasZbar } from '../../helpers/qr-decode.js';

let sandbox: Sandbox | undefined;

const QR_LINE = /^[█▀▄ ]{20,}$/;
const TARGET = 'ops@box.example.com:2222';

/** The lines a person sees on a columns×rows terminal through the whole login (the pty's \r\n and prompt redraws undone). */
async function loginOnTerminal(sb: Sandbox, columns: number, rows: number): Promise<string[]> {
  const command = `stty cols ${columns} rows ${rows} && exec node ${BIN} login --qr --force --timeout 30s --ssh-target ${TARGET}`;
  const child = execa('script', ['-qfec', command, '/dev/null'], {
    env: { ...sb.env, TERM: 'dumb' },
    extendEnv: false,
    cwd: sb.root,
    reject: false,
    timeout: 45_000,
    stdin: 'pipe',
  });
  let transcript = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL and tunnel within 20 s:\n${transcript}`)), 20_000);
    // Decoded as a stream: a block character split across two chunks must not turn into U+FFFD.
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (b: string) => {
      transcript += b;
      const lines = stripAnsi(transcript).split(/\r?\n/);
      const found = lines.find((l) => l.startsWith('https://'));
      if (found && lines.some((l) => l.startsWith('ssh -N'))) {
        clearTimeout(timer);
        resolve(found.trim());
      }
    });
  });
  expect(await httpGet(redirectFor(url))).toBe(200);
  const result = await child;
  expect(result.exitCode, transcript).toBe(0);
  return stripAnsi(transcript)
    .split(/\r?\n/)
    .map((l) => l.replace(/^.*\r/, ''));
}

describe('login --qr on a terminal', () => {
  it('80×24: one note names the size the code needs; no code is drawn; the URL and the tunnel command are shown', async () => {
    sandbox = makeSandbox();
    const lines = await loginOnTerminal(sandbox, 80, 24);
    expect(lines.filter((l) => QR_LINE.test(l))).toEqual([]);
    const notes = lines.filter((l) => l.startsWith('QR code left out'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^QR code left out \(needs \d+×\d+, terminal is 80×24\): enlarge it or use the URL\.$/);
    expect(notes[0]!.length).toBeLessThanOrEqual(80);
    expect(lines.some((l) => l.startsWith('https://accounts.google.com/'))).toBe(true);
    expect(lines.some((l) => l.startsWith('ssh -N -L '))).toBe(true);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('200×60: the code is drawn first, within the width, and the URL and tunnel command follow it on the same screen', async () => {
    sandbox = makeSandbox();
    const lines = await loginOnTerminal(sandbox, 200, 60);
    const qr = lines.map((l, i) => [l, i] as const).filter(([l]) => QR_LINE.test(l));
    expect(qr.length).toBeGreaterThan(30); // the height follows the URL's length
    expect(qr.every(([l]) => [...l].length <= 200)).toBe(true);
    const lastQr = qr.at(-1)![1];
    const urlAt = lines.findIndex((l) => l.startsWith('https://accounts.google.com/'));
    const tunnelAt = lines.findIndex((l) => l.startsWith('ssh -N -L '));
    expect(urlAt).toBeGreaterThan(lastQr);
    expect(tunnelAt).toBeGreaterThan(urlAt);
    // From the code's first row to the tunnel command, all of it fits on the 60-row screen.
    const shown = lines.slice(qr[0]![1], tunnelAt + 1);
    expect(shown.reduce((n, l) => n + Math.max(1, Math.ceil([...l].length / 200)), 0)).toBeLessThanOrEqual(60);
    // A real decoder reads the code as drawn, and it is the URL shown under it.
    expect(hasZbar(), 'zbarimg is not installed (apt-get install zbar-tools; .ci/run installs it)').toBe(true);
    expect(await decodeQr(qr.map(([l]) => l))).toBe(lines[urlAt]!.trim());
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('the size the help states is the size a decodable code needs (no smaller code exists: level L, half blocks)', async () => {
    sandbox = makeSandbox();
    const help = await execa('node', [BIN, 'login', '--help'], { env: sandbox.env, extendEnv: false });
    const [, w, h] = /about (\d+)×(\d+)/.exec(String(help.stdout)) ?? [];
    expect(w, 'login --help states the size --qr needs').toBeDefined();
    for (const [cols, rows] of [
      [80, 24],
      [100, 30],
    ] as const) {
      const lines = await loginOnTerminal(sandbox, cols, rows);
      const [, needW, needH] =
        /needs (\d+)×(\d+)/.exec(lines.find((l) => l.startsWith('QR code left out')) ?? '') ?? [];
      expect(Math.abs(Number(needW) - Number(w))).toBeLessThanOrEqual(3);
      expect(Math.abs(Number(needH) - Number(h))).toBeLessThanOrEqual(3);
    }
    // The code alone at qrcode-terminal's lowest error correction (L) decodes; it is as small as this URL allows.
    const big = await loginOnTerminal(sandbox, Number(w), Number(h));
    const qr = big.filter((l) => QR_LINE.test(l));
    expect(qr.length).toBeGreaterThan(30);
    expect(await decodeQr(qr)).toMatch(/^https:\/\/accounts\.google\.com\//);
  });
});
