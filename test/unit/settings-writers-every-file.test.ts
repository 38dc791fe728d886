/**
 * Every writer of settings.json (set-auth, login's auth.type write for each
 * profile) against every kind of file the reader accepts or names: comments,
 * CRLF line ends, both, a trailing comma, a byte-order mark. A file the reader
 * accepts is edited in place, keeping its comments and line ends; a file it
 * refuses gets a usage error (exit 2) that names the fix; nothing ends as an
 * internal error, and a refused file keeps its bytes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgyError } from '../../src/core/errors.js';
import { getProfile } from '../../src/profiles/index.js';
import { readSettings, setAuthType } from '../../src/settings/index.js';
import { parseJsonTree, toPlain } from '../../src/settings/jsonc.js';
import { writeAuthType } from '../../src/settings/profile-auth.js';
import { problemsOf } from '../../src/settings/validate.js';

let root: string;
let stateDir: string;
let file: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-writers-'));
  stateDir = path.join(root, 'state');
  fs.mkdirSync(stateDir, { mode: 0o700 });
  file = path.join(stateDir, 'settings.json');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

interface Writer {
  name: string;
  /** The key path the writer sets. */
  keys: readonly string[];
  value: string;
  write(): void;
}

const WRITERS: readonly Writer[] = [
  {
    name: 'settings set-auth',
    keys: ['auth', 'type'],
    value: 'oauth-personal',
    write: () => setAuthType(stateDir, 'oauth-personal', { env: {} }),
  },
  {
    name: "login's auth.type write (antigravity)",
    keys: ['auth', 'type'],
    value: 'oauth-personal',
    write: () => writeAuthType(getProfile('antigravity'), stateDir, 'oauth-personal', {}),
  },
  {
    name: "login's selectedType write (gemini-cli)",
    keys: ['security', 'auth', 'selectedType'],
    value: 'oauth-personal',
    write: () => writeAuthType(getProfile('gemini-cli'), stateDir, 'oauth-personal', {}),
  },
];

const COMMENTS = '{\n  // who signs in\n  "model": "x", /* kept */\n  "ui": {"theme": "dark"}\n}\n';
const ACCEPTED: Readonly<Record<string, string>> = {
  comments: COMMENTS,
  CRLF: '{\r\n  "model": "x",\r\n  "ui": {\r\n    "theme": "dark"\r\n  }\r\n}\r\n',
  'comments and CRLF': COMMENTS.replace(/\n/g, '\r\n'),
};
const REFUSED: Readonly<Record<string, { text: string; fix: RegExp }>> = {
  'a trailing comma': { text: '{\n  "model": "x",\n}\n', fix: /fix (it|the file)/ },
  'a byte-order mark': {
    text: '\ufeff{\n  "model": "x"\n}\n',
    fix: /byte-order mark.*sed -i '1s\/\^\\xEF\\xBB\\xBF\/\/'/,
  },
};

const valueAt = (data: unknown, keys: readonly string[]): unknown =>
  keys.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], data);

describe.each(WRITERS)('$name', (writer) => {
  it.each(Object.entries(ACCEPTED))(
    'edits a file with %s in place, keeping its comments and line ends',
    (_kind, text) => {
      fs.writeFileSync(file, text);
      writer.write();
      const after = fs.readFileSync(file, 'utf8');
      const data = toPlain(parseJsonTree(after, { comments: true }));
      expect(valueAt(data, writer.keys)).toBe(writer.value);
      expect(valueAt(data, ['ui', 'theme'])).toBe('dark');
      for (const comment of text.match(/\/\/[^\r\n]*|\/\*.*?\*\//g) ?? []) expect(after).toContain(comment);
      if (text.includes('\r\n')) expect(after.replace(/\r\n/g, '')).not.toContain('\n');
      else expect(after).not.toContain('\r');
    },
  );

  it.each(Object.entries(REFUSED))('refuses a file with %s with exit 2 and the fix, keeping its bytes', (_kind, c) => {
    fs.writeFileSync(file, c.text);
    let caught: unknown;
    try {
      writer.write();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AgyError);
    const err = caught as AgyError;
    expect(err.exit).toBe(2);
    expect(`${err.message}\n${err.hint ?? ''}`).toMatch(c.fix);
    expect(fs.readFileSync(file, 'utf8')).toBe(c.text);
  });
});

describe('a settings.json with a byte-order mark', () => {
  it('validate names the mark and the command that removes it, and that command makes the file usable', async () => {
    fs.writeFileSync(file, '\ufeff{"auth": {"type": "oauth-personal"}}\n');
    const problems = problemsOf(readSettings(stateDir), {});
    const invalid = problems.find((p) => p.id === 'json-invalid');
    expect(invalid?.message).toContain('byte-order mark');
    const command = /remove the byte-order mark: (.*)$/.exec(invalid?.hint ?? '')?.[1];
    expect(command).toBeDefined();
    const { execFileSync } = await import('node:child_process');
    execFileSync('/bin/sh', ['-c', command!]);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"auth": {"type": "oauth-personal"}}\n');
    expect(problemsOf(readSettings(stateDir), {}).filter((p) => p.severity === 'error')).toEqual([]);
  });
});
