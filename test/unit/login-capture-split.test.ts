/** A sign-in URL that reaches the capture in pieces: across lines of one stream, and across reads of one line. */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineSplitter } from '../../src/acp/framing.js';
import type { Candidate } from '../../src/login/capture/evidence.js';
import { UrlCapture } from '../../src/login/capture/pipeline.js';
import { continuationOf, terminalUrls, trailingUrl, unframed } from '../../src/login/capture/text-source.js';
import { createShimDir, type ShimDir } from '../../src/login/shims.js';

const PREFIX = 'https://accounts.google.com/o/oauth2/v2';
const GOOD = `${PREFIX}/auth?response_type=code&client_id=x.apps.googleusercontent.com&redirect_uri=http%3A%2F%2F127.0.0.1%3A35293%2F&scope=a+b&state=S123&access_type=offline&code_challenge=CHAL&code_challenge_method=S256`;

let shims: ShimDir | undefined;
let capture: UrlCapture | undefined;
afterEach(() => {
  capture?.close();
  shims?.remove();
  vi.useRealTimers();
});

function start(): { capture: UrlCapture; rejected: Array<[Candidate, boolean]> } {
  shims = createShimDir({});
  const rejected: Array<[Candidate, boolean]> = [];
  capture = new UrlCapture(shims, (c, loud) => rejected.push([c, loud]));
  return { capture, rejected };
}

const wrap = (text: string, width: number): string[] =>
  Array.from({ length: Math.ceil(text.length / width) }, (_, i) => text.slice(i * width, (i + 1) * width));

describe('split lines: the pieces', () => {
  it('a URL that ends its line is a prefix; a line of URL characters that starts no new URL continues it', () => {
    expect(trailingUrl(`Open this: ${PREFIX}`)).toBe(PREFIX);
    expect(trailingUrl(`Open ${PREFIX} now`)).toBeUndefined();
    expect(continuationOf('/auth?response_type=code')).toBe('/auth?response_type=code');
    expect(continuationOf('/auth?response_type=code and prose')).toBeUndefined();
    expect(continuationOf('https://example.com/')).toBeUndefined();
    expect(continuationOf(' indented')).toBeUndefined();
  });
});

describe('split lines: the pipeline', () => {
  it('the prefix cut at /o/oauth2/v2 and the rest on the next line: the whole URL, and nothing rejected', async () => {
    const { capture, rejected } = start();
    capture.feedLine('', 'stderr', `Open the following link to authenticate the ACP server: ${PREFIX}`);
    capture.feedLine('', 'stderr', GOOD.slice(PREFIX.length));
    capture.feedLine('', 'stderr', 'waiting for the browser');
    const found = await capture.found;
    expect(found.auth.url).toBe(new URL(GOOD).toString());
    expect(found.auth.state).toBe('S123');
    expect(rejected).toEqual([]);
  });

  it('a URL wrapped at 40 columns is taken whole, not where a piece first validates (state comes late)', async () => {
    vi.useFakeTimers();
    const { capture } = start();
    for (const piece of wrap(GOOD, 40)) capture.feedLine('', 'stdout', piece);
    // No line follows: the run is judged after a short quiet period.
    vi.advanceTimersByTime(1000);
    const found = await capture.found;
    expect(found.auth.url).toBe(new URL(GOOD).toString());
    expect(found.auth.state).toBe('S123');
    expect(found.source).toBe('stdout');
  });

  it('a prefix alone is never taken: it is evidence with its own reason once the next line is no continuation', () => {
    const { capture, rejected } = start();
    let taken = false;
    void capture.found.then(() => (taken = true));
    capture.feedLine('', 'stderr', `see ${PREFIX}`);
    expect(rejected).toEqual([]);
    capture.feedLine('', 'stderr', 'no continuation here');
    expect(rejected.map(([c, loud]) => [c.url, c.reason, loud])).toEqual([
      [PREFIX, 'response_type is not "code"', true],
    ]);
    expect(taken).toBe(false);
  });

  it('a held prefix is in the evidence the timeout error reads, even with no further line', () => {
    const { capture } = start();
    capture.feedLine('', 'stderr', `see ${PREFIX}`);
    expect(capture.evidence.candidates).toEqual([expect.objectContaining({ channel: 'stderr', url: PREFIX })]);
  });

  it('a held piece is evidence, never taken, when another channel has the URL first', async () => {
    const { capture, rejected } = start();
    capture.feedLine('', 'stderr', PREFIX);
    capture.feedLine('', 'stderr', '/auth?response_type=code');
    capture.feedMessage({ method: '_vendor/auth_url', params: { url: GOOD } }, { solicited: false, method: undefined });
    expect((await capture.found).source).toBe('rpc');
    expect(rejected.map(([c]) => c.reason)).toEqual(['no redirect_uri (joined from 2 lines)']);
  });

  it('pieces that do not join into a valid URL: the whole is rejected, saying it was joined', () => {
    const { capture, rejected } = start();
    capture.feedLine('', 'stderr', PREFIX);
    capture.feedLine('', 'stderr', '/auth?response_type=token&state=SECRET');
    capture.feedLine('', 'stderr', 'all done');
    expect(rejected).toHaveLength(1);
    const [c] = rejected[0]!;
    expect(c.reason).toBe('response_type is not "code" (joined from 2 lines)');
    expect(c.url).toBe(`${PREFIX}/auth?response_type=token&state=[REDACTED]`);
  });

  it('a continuation on the other stream, or one that starts a new URL, does not join', () => {
    const { capture, rejected } = start();
    capture.feedLine('', 'stderr', PREFIX);
    capture.feedLine('', 'stdout', GOOD.slice(PREFIX.length));
    capture.feedLine('', 'stderr', 'https://example.com/next');
    expect(rejected.map(([c]) => c.url)).toEqual([PREFIX]);
  });

  it('bounded: pieces beyond the line bound are not joined', () => {
    const { capture, rejected } = start();
    capture.feedLine('', 'stderr', PREFIX);
    for (let i = 0; i < 40; i++) capture.feedLine('', 'stderr', `/x${i}`);
    capture.feedLine('', 'stderr', GOOD.slice(PREFIX.length));
    capture.feedLine('', 'stderr', 'end of output');
    expect(rejected[0]![0].reason).toMatch(/joined from 32 lines/);
  });
});

const HELP = 'https://antigravity.google/docs/acp';
/** The URL hard-wrapped inside a box, a help link on the line before it, as some builds print it. */
function boxed(url: string, width: number, side: string, rule: [string, string, string]): string[] {
  const row = (t: string): string => `${side} ${t.padEnd(width)} ${side}`;
  const line = `${rule[0]}${rule[1].repeat(width + 2)}${rule[2]}`;
  return [line, row('Sign in'), row(`Help: ${HELP}`), ...wrap(url, width).map(row), row(''), line];
}

describe('split lines inside a box', () => {
  it('the frame is not part of the line, nor of a URL; a rule line continues nothing', () => {
    expect(unframed('│ /auth?response_type=code    │')).toBe('/auth?response_type=code');
    expect(unframed('| /auth?response_type=code |')).toBe('/auth?response_type=code');
    expect(unframed('plain line')).toBe('plain line');
    expect(terminalUrls(`│ ${PREFIX}/auth?x=1│`)).toEqual([`${PREFIX}/auth?x=1`]);
    expect(terminalUrls(`| see ${PREFIX}|`)).toEqual([PREFIX]);
    expect(continuationOf('╰──────────╯')).toBeUndefined();
    expect(continuationOf('+----------+')).toBeUndefined();
    expect(continuationOf('==========')).toBeUndefined();
  });

  it.each([
    ['Unicode box (│, ╭─╮)', '│', ['╭', '─', '╮'] as [string, string, string]],
    ['ASCII box (|, +-+)', '|', ['+', '-', '+'] as [string, string, string]],
  ])('%s: the whole URL, no frame character in it, the help link not joined to it', async (_n, side, rule) => {
    const { capture, rejected } = start();
    for (const l of boxed(GOOD, 50, side, rule)) capture.feedLine('', 'stderr', l);
    const found = await capture.found;
    expect(found.auth.url).toBe(new URL(GOOD).toString());
    expect(found.auth.state).toBe('S123');
    expect(rejected.map(([c]) => c.url)).toEqual([HELP]);
  });

  it('a URL that fills the box to its right edge (no padding before the frame) is still taken whole', async () => {
    const { capture } = start();
    const pieces = wrap(GOOD, 40);
    for (const p of pieces) capture.feedLine('', 'stdout', `│${p.padEnd(40)}│`);
    capture.feedLine('', 'stdout', `└${'─'.repeat(40)}┘`);
    expect((await capture.found).auth.url).toBe(new URL(GOOD).toString());
  });

  it('two URLs on consecutive boxed lines are never joined', () => {
    const { capture, rejected } = start();
    capture.feedLine('', 'stderr', `│ ${PREFIX} │`);
    capture.feedLine('', 'stderr', `│ https://example.com/other │`);
    capture.feedLine('', 'stderr', `╰────╯`);
    expect(rejected.map(([c]) => c.url)).toEqual([PREFIX, 'https://example.com/other']);
  });
});

describe('split reads', () => {
  it('a line that arrives in two reads is one line by the time the capture sees it', async () => {
    const { capture } = start();
    const stream = new PassThrough();
    const splitter = new LineSplitter(1 << 20, () => undefined);
    stream.on('data', (chunk: Buffer) => {
      for (const raw of splitter.push(chunk)) capture.feedLine(raw, 'stderr', raw);
    });
    const line = `Open the following link to authenticate the ACP server: ${GOOD}\n`;
    stream.write(line.slice(0, 80));
    await new Promise<void>((r) => setImmediate(r));
    stream.write(line.slice(80));
    expect((await capture.found).auth.state).toBe('S123');
  });
});
