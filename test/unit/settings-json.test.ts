import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, parseJsonTree, setStringAt, toPlain } from '../../src/settings/jsonc.js';
import { parseSettingsText } from '../../src/settings/read.js';

function errorAt(text: string): { line: number; column: number; message: string } {
  try {
    parseJsonTree(text);
  } catch (err) {
    expect(err).toBeInstanceOf(JsonSyntaxError);
    const e = err as JsonSyntaxError;
    return { line: e.line, column: e.column, message: e.message };
  }
  throw new Error(`parsed without error: ${text}`);
}

describe('JSON parser: line and column of syntax errors', () => {
  it.each([
    ['{\n  "a": }', 2, 8],
    ['{\n  "a": 1\n  "b": 2\n}', 3, 3],
    ['{"a": 1,}', 1, 9],
    ['', 1, 1],
    ['  \n ', 2, 2],
    ['\ufeff{}', 1, 1],
    ['{"a": "x', 1, 7],
    ['{"a": 01}', 1, 7],
    ['{"a": "x\ty"}', 1, 9],
    ['{"a": 1} x', 1, 10],
    ["{'a': 1}", 1, 2],
    ['{"a": tru}', 1, 7],
    ['{"a": "\\q"}', 1, 8],
  ])('%j fails at line %i, column %i', (text, line, column) => {
    const at = errorAt(text);
    expect([at.line, at.column]).toEqual([line, column]);
    expect(at.message.length).toBeGreaterThan(5);
  });

  it('names the byte-order mark and an empty file in plain words', () => {
    expect(errorAt('\ufeff{}').message).toContain('byte-order mark');
    expect(errorAt('').message).toContain('empty');
  });
});

describe('JSON parser: agrees with JSON.parse', () => {
  const valid = [
    '{}',
    '[]',
    '"x"',
    '0',
    '-0.5e+10',
    'true',
    'null',
    '{"a": [1, 2, {"b": null}], "c": "\\u00e9\\n", "d": -1.25E-3}',
    '{"10": 1, "2": 2, "a": 3}',
    '{"a": 1, "a": 2}',
    '{"__proto__": {"x": 1}}',
    ' \t\r\n{ "sp" : [ ] } \n',
  ];
  const invalid = [
    '{',
    '[1,]',
    '{"a" 1}',
    '01',
    '1.',
    '.5',
    '-',
    '+1',
    '"\\x"',
    'nul',
    '{"a":1}}',
    'NaN',
    '"a\nb"',
    '{,}',
  ];

  it.each(valid)('parses %j like JSON.parse', (text) => {
    expect(toPlain(parseJsonTree(text))).toEqual(JSON.parse(text));
  });

  it.each(invalid)('rejects %j like JSON.parse', (text) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(() => parseJsonTree(text)).toThrow(JsonSyntaxError);
  });

  it('keeps "__proto__" as data, never as the prototype', () => {
    const plain = toPlain(parseJsonTree('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(Object.hasOwn(plain, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('settings shape', () => {
  it('points at a non-object auth or gcp, or a non-object top level', () => {
    expect(parseSettingsText('{\n  "auth": "oauth-personal"\n}').error).toEqual({
      kind: 'shape',
      message: '"auth" is a string, not an object',
      line: 2,
      column: 11,
    });
    expect(parseSettingsText('{"gcp": [1]}').error).toMatchObject({ kind: 'shape', line: 1, column: 9 });
    expect(parseSettingsText('\n  [1]').error).toMatchObject({
      kind: 'shape',
      message: 'the top level is an array, not an object',
      line: 2,
      column: 3,
    });
    expect(parseSettingsText('{"auth": null}').error?.message).toBe('"auth" is null, not an object');
  });

  it('gives data for a good file and no error', () => {
    const r = parseSettingsText('{"auth": {"type": "gemini-api-key"}, "x": 1}');
    expect(r.error).toBeUndefined();
    expect(r.data).toEqual({ auth: { type: 'gemini-api-key' }, x: 1 });
  });
});

describe('minimal JSON edits', () => {
  it('replaces a value and leaves every other byte alone', () => {
    const text =
      '{\n    "zeta": 1.0,\n    "10": [1, 2e5, {"x": 12345678901234567890}],\n    "auth": {"type": "vertex-ai", "extra": "\\u00e9"},\n    "2": null\n}';
    const out = setStringAt(text, ['auth', 'type'], 'agent-platform');
    expect(out).toBe(text.replace('"vertex-ai"', '"agent-platform"'));
  });

  it('appends a missing key with the indentation of its neighbours (tabs too)', () => {
    const text = '{\n\t"a": 1,\n\t"auth": {\n\t\t"type": "x"\n\t}\n}\n';
    const out = setStringAt(setStringAt(text, ['gcp', 'project'], 'p'), ['gcp', 'location'], 'us-central1');
    expect(out).toBe(
      '{\n\t"a": 1,\n\t"auth": {\n\t\t"type": "x"\n\t},\n\t"gcp": {\n\t\t"project": "p",\n\t\t"location": "us-central1"\n\t}\n}\n',
    );
  });

  it('keeps a one-line file on one line', () => {
    expect(setStringAt('{"auth":{"type":"a"},"z":[1]}', ['gcp', 'project'], 'p')).toBe(
      '{"auth":{"type":"a"},"z":[1], "gcp": {"project": "p"}}',
    );
  });

  it('lays out {} and a fresh file like JSON.stringify(v, null, 2)', () => {
    const want = { auth: { type: 'oauth-personal' } };
    expect(setStringAt('{}', ['auth', 'type'], 'oauth-personal')).toBe(JSON.stringify(want, null, 2));
    expect(setStringAt('{}\n', ['auth', 'type'], 'oauth-personal')).toBe(`${JSON.stringify(want, null, 2)}\n`);
    const nested = setStringAt('{\n  "auth": {}\n}', ['auth', 'type'], 'x');
    expect(nested).toBe('{\n  "auth": {\n    "type": "x"\n  }\n}');
  });

  it('edits the last of duplicate keys, the one the server reads', () => {
    const out = setStringAt('{"auth": {"type": "a"}, "auth": {"type": "b"}}', ['auth', 'type'], 'c');
    expect(out).toBe('{"auth": {"type": "a"}, "auth": {"type": "c"}}');
    expect(JSON.parse(out)).toEqual({ auth: { type: 'c' } });
  });

  it('escapes values it writes', () => {
    const out = setStringAt('{}', ['gcp', 'project'], 'a"b\\c');
    expect(JSON.parse(out)).toEqual({ gcp: { project: 'a"b\\c' } });
  });
});

describe('comments', () => {
  const text = '// header\n{\n  "a": 1, /* why */\n  "auth": {"type": "x"} // note\n}\n';

  it('are a syntax error in plain JSON (antigravity), with line and column', () => {
    expect(errorAt(text)).toMatchObject({ line: 1, column: 1, message: expect.stringContaining('comment') });
    expect(parseSettingsText(text).error).toMatchObject({ kind: 'syntax', line: 1, column: 1 });
  });

  it('are read, and kept on edit, when the file allows them (gemini-cli)', () => {
    expect(parseSettingsText(text, { comments: true })).toEqual({
      tree: expect.anything(),
      data: { a: 1, auth: { type: 'x' } },
    });
    const out = setStringAt(text, ['auth', 'type'], 'y', { comments: true });
    expect(out).toBe(text.replace('"x"', '"y"'));
    expect(() => setStringAt(text, ['auth', 'type'], 'y')).toThrow(JsonSyntaxError);
  });
});
