import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileTracer } from '../../src/acp/file-tracer.js';
import { redact, redactText, serverText, serverValue } from '../../src/acp/redact.js';
import { sanitizeForTerminal } from '../../src/util/terminal-text.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-trace-');

describe('redaction', () => {
  it('redacts code, state, token- and key-named fields at any depth', () => {
    const out = redact({
      params: {
        code: 'abc',
        state: 's1',
        nested: [{ access_token: 'ya29.x', apiKey: 'k', refresh_token: 'r' }],
        methodId: 'oauth-personal',
      },
    });
    expect(out).toEqual({
      params: {
        code: '[REDACTED]',
        state: '[REDACTED]',
        nested: [{ access_token: '[REDACTED]', apiKey: '[REDACTED]', refresh_token: '[REDACTED]' }],
        methodId: 'oauth-personal',
      },
    });
  });

  it('redacts secrets inside URLs and free text', () => {
    expect(redact({ error: { code: -32601, message: 'Method not found' }, params: { code: 1234 } })).toEqual({
      error: { code: -32601, message: 'Method not found' },
      params: { code: 1234 },
    });
    expect(redactText('http://127.0.0.1:4000/?code=4/0AbC-d&state=xyz&scope=a')).toBe(
      'http://127.0.0.1:4000/?code=[REDACTED]&state=[REDACTED]&scope=a',
    );
    expect(redactText('Authorization: Bearer abcdefghijkl')).toBe('Authorization: Bearer [REDACTED]');
    expect(redactText('token ya29.a0AfB_secret and 1//0gLongRefresh')).toBe('token [REDACTED] and [REDACTED]');
    expect(redactText('AIzaSyA-1234567890abcdefghijklmnop')).toBe('[REDACTED]');
  });

  it('keeps the structure of what it does not redact', () => {
    expect(redact({ a: 1, b: [true, null, 'plain'], state: null })).toEqual({
      a: 1,
      b: [true, null, 'plain'],
      state: null,
    });
  });

  it('the trace file is 0600 JSONL with direction and timestamp, and holds no secret', () => {
    const file = path.join(tmp(), 't.jsonl');
    const t = new FileTracer(file);
    t.record('send', { jsonrpc: '2.0', id: 1, method: 'x', params: { code: 'SECRET-CODE' } });
    t.record('stdout-noise', 'go to https://x/?code=SECRET-CODE&state=S');
    t.close();
    const text = fs.readFileSync(file, 'utf8');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(text).not.toContain('SECRET-CODE');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { dir: string; ts: string });
    expect(lines.map((l) => l.dir)).toEqual(['send', 'stdout-noise']);
    expect(Number.isNaN(Date.parse(lines[0]!.ts))).toBe(false);
  });

  it('the trace holds no email address, wherever the server puts one (an account label, a message)', () => {
    const file = path.join(tmp(), 't.jsonl');
    const t = new FileTracer(file);
    const accounts = [{ label: 'first.last+acp@corp.example.co.uk', email: 'someone@example.com', active: true }];
    t.record('recv', { jsonrpc: '2.0', method: 'auth/status_update', params: { state: 'authenticated', accounts } });
    t.record('stderr', 'signed in as someone@example.com');
    t.close();
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toMatch(/@(corp\.)?example\./);
    expect(text).toContain('auth/status_update');
    expect(text).toContain('"active":true');
  });
});

describe('redaction of every token shape a server may leak', () => {
  it('redacts JSON token fields inside a text line, plain and escaped', () => {
    expect(
      redactText('saved {"refresh_token":"r-1","access_token": "a-1","client_secret":"c-1","id_token":"i-1"}'),
    ).toBe(
      'saved {"refresh_token":"[REDACTED]","access_token": "[REDACTED]","client_secret":"[REDACTED]","id_token":"[REDACTED]"}',
    );
    expect(redactText('"{\\"refresh_token\\":\\"r-2\\"}"')).toBe('"{\\"refresh_token\\":\\"[REDACTED]\\"}"');
  });

  it('redacts NAME_KEY=, *_TOKEN=, *_SECRET= assignments and bare code=/state=', () => {
    expect(redactText('GEMINI_API_KEY=abc OAUTH_TOKEN=def CLIENT_SECRET=ghi PATH=/usr/bin')).toBe(
      'GEMINI_API_KEY=[REDACTED] OAUTH_TOKEN=[REDACTED] CLIENT_SECRET=[REDACTED] PATH=/usr/bin',
    );
    expect(redactText('callback got code=4/0Ab state=xyz')).toBe('callback got code=[REDACTED] state=[REDACTED]');
  });

  it('serverText strips control characters before redacting (an escape inside a token does not hide it)', () => {
    expect(serverText('\x1b]0;pwned\x07token ya29.a0\x1b[0mSecret\r')).toBe('token [REDACTED]');
    expect(serverValue({ message: 'Bearer abcdefghijkl\x07', data: { refresh_token: 'x' } })).toEqual({
      message: 'Bearer [REDACTED]',
      data: { refresh_token: '[REDACTED]' },
    });
  });
});

describe('sanitizeForTerminal: untrusted text never drives the terminal', () => {
  it('removes escape sequences and C0/C1 controls, keeping line breaks', () => {
    expect(sanitizeForTerminal('a\x1b]0;title\x07b\x1b[2J\x1b[Hc\x9b31md\x07e\x00f\x85g\nh\ti')).toBe('abcdefg\nh i');
    expect(sanitizeForTerminal('one\ntwo\r\nthree', { singleLine: true })).toBe('one two three');
  });
});
