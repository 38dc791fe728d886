import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AcpError, renderAcpError } from '../../src/acp/acp-error.js';
import { Connection } from '../../src/acp/connection.js';
import { LineSplitter, parseLine, stripAnsi } from '../../src/acp/framing.js';

describe('framing', () => {
  it('strips CSI, OSC and two-byte escape sequences', () => {
    expect(stripAnsi('\x1b[?1049l{"a":1}')).toBe('{"a":1}');
    expect(stripAnsi('\x1b]0;title\x07hello\x1b[0m')).toBe('hello');
    expect(stripAnsi('\x1b[2J\x1b[Hx')).toBe('x');
  });

  it('parses a JSON-RPC line behind an ANSI prefix and keeps everything else as noise', () => {
    const parsed = parseLine('\x1b[?1049l{"jsonrpc":"2.0","id":3,"result":{}}\r');
    expect(parsed).toEqual({ kind: 'message', message: { jsonrpc: '2.0', id: 3, result: {} } });
    expect(parseLine('Open the following link: https://accounts.google.com/x')).toEqual({
      kind: 'noise',
      line: 'Open the following link: https://accounts.google.com/x',
    });
    expect(parseLine('{not json')).toMatchObject({ kind: 'noise' });
    expect(parseLine('{"just":"an object"}')).toMatchObject({ kind: 'noise' });
    expect(parseLine('   ')).toEqual({ kind: 'empty' });
  });

  it('splits lines across chunk boundaries and keeps multi-megabyte lines whole', () => {
    const s = new LineSplitter();
    const big = 'x'.repeat(5 * 1024 * 1024);
    expect(s.push(Buffer.from('ab'))).toEqual([]);
    expect(s.push(Buffer.from(`c\n${big.slice(0, 100)}`))).toEqual(['abc']);
    const lines = s.push(Buffer.from(`${big.slice(100)}\nlast`));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBe(big.length);
    expect(s.flush()).toBe('last');
  });

  it('does not split a multi-byte UTF-8 character that straddles chunks', () => {
    const s = new LineSplitter();
    const bytes = Buffer.from('é\n');
    expect(s.push(bytes.subarray(0, 1))).toEqual([]);
    expect(s.push(bytes.subarray(1))).toEqual(['é']);
  });
});

function pair() {
  const fromServer = new PassThrough();
  const toServer = new PassThrough();
  const written: string[] = [];
  toServer.on('data', (b: Buffer) => written.push(...b.toString().split('\n').filter(Boolean)));
  return { conn: new Connection(fromServer, toServer), fromServer, written };
}

describe('connection', () => {
  it('correlates responses by id, including out of order, and ignores unknown ids', async () => {
    const { conn, fromServer, written } = pair();
    const a = conn.request('a', {});
    const b = conn.request('b', {});
    await new Promise((r) => setImmediate(r));
    const [ida, idb] = written.map((l) => (JSON.parse(l) as { id: number }).id);
    fromServer.write(`{"jsonrpc":"2.0","id":999,"result":"stray"}\n`);
    fromServer.write(`{"jsonrpc":"2.0","id":${idb},"result":"B"}\n{"jsonrpc":"2.0","id":${ida},"result":"A"}\n`);
    await expect(a).resolves.toBe('A');
    await expect(b).resolves.toBe('B');
  });

  it('rejects with AcpError and renders -32602 loc as the field to fix', async () => {
    const { conn, fromServer, written } = pair();
    const p = conn.request('authenticate', { method: 'x' });
    await new Promise((r) => setImmediate(r));
    const id = (JSON.parse(written[0]!) as { id: number }).id;
    fromServer.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id,
        error: {
          code: -32602,
          message: 'Invalid params',
          data: { errors: [{ loc: ['methodId'], msg: 'field required', type: 'value_error.missing' }] },
        },
      })}\n`,
    );
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AcpError);
    expect((err as AcpError).message).toBe('authenticate: Invalid params (-32602): methodId: field required');
  });

  it('renders -32000 with data.message', () => {
    expect(
      renderAcpError('session/new', {
        code: -32000,
        message: 'Authentication required',
        data: { message: 'No authentication method selected.' },
      }),
    ).toBe('session/new: Authentication required (-32000): No authentication method selected.');
  });

  it('answers agent requests: reject-once for permission, -32601 for unknown methods; passes notifications and noise on', async () => {
    const { conn, fromServer, written } = pair();
    const notes: string[] = [];
    const noise: string[] = [];
    conn.onNotification((m) => notes.push(m));
    conn.onNoise((l) => noise.push(l));
    fromServer.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 'p1',
        method: 'session/request_permission',
        params: {
          options: [
            { optionId: 'allow', kind: 'allow_once' },
            { optionId: 'deny', kind: 'reject_once' },
          ],
        },
      })}\n`,
    );
    fromServer.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'fs/read_text_file', params: {} })}\n`);
    fromServer.write('garbage line\n{"jsonrpc":"2.0","method":"session/update","params":{"x":1}}\n');
    fromServer.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'weird/unknown_notification', params: null })}\n`);
    await new Promise((r) => setTimeout(r, 10));
    const answers = written.map((l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: number } });
    expect(answers.find((a) => a.id === 'p1')?.result).toEqual({ outcome: { outcome: 'selected', optionId: 'deny' } });
    expect(answers.find((a) => a.id === 7)?.error?.code).toBe(-32601);
    expect(notes).toEqual(['session/update', 'weird/unknown_notification']);
    expect(noise).toEqual(['garbage line']);
  });

  it('fail() rejects every pending call at once and later calls immediately', async () => {
    const { conn } = pair();
    const p = conn.request('slow', {}, { timeoutMs: 60_000 });
    conn.fail(new Error('server exited with code 3'));
    await expect(p).rejects.toThrow('server exited with code 3');
    await expect(conn.request('again', {})).rejects.toThrow('server exited with code 3');
  });

  it('times out a call with exit code 5', async () => {
    const { conn } = pair();
    const err = await conn.request('never', {}, { timeoutMs: 20 }).catch((e: unknown) => e);
    expect((err as { exit: number }).exit).toBe(5);
  });

  it('an aborted signal rejects the call as interrupted (130)', async () => {
    const { conn } = pair();
    const ac = new AbortController();
    const p = conn.request('x', {}, { signal: ac.signal });
    ac.abort();
    expect(((await p.catch((e: unknown) => e)) as { exit: number }).exit).toBe(130);
  });
});

describe('bounded line buffering: an endless line from the server cannot exhaust memory', () => {
  it('drops a line longer than the bound, arriving without a newline in many chunks, and reads on', () => {
    const drops: number[] = [];
    const s = new LineSplitter(1024, (bytes) => drops.push(bytes));
    expect(s.push(Buffer.from(`ok-1\n${'x'.repeat(600)}`))).toEqual(['ok-1']);
    for (let i = 0; i < 10; i++) expect(s.push(Buffer.from('y'.repeat(600)))).toEqual([]);
    expect(s.push(Buffer.from('zz\nok-2\npartial'))).toEqual(['ok-2']);
    expect(drops).toEqual([600 * 11 + 2]);
    expect(s.dropped).toBe(1);
    expect(s.flush()).toBe('partial');
  });

  it('holds at most the bound while skipping (memory stays flat)', () => {
    const s = new LineSplitter(1024);
    for (let i = 0; i < 100; i++) s.push(Buffer.alloc(64 * 1024, 0x78));
    expect((s as unknown as { held: number }).held).toBe(0);
    expect((s as unknown as { parts: Buffer[] }).parts).toEqual([]);
    expect(s.flush()).toBeUndefined();
    expect(s.dropped).toBe(1);
  });
});
