import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgyError } from '../../src/core/errors.js';
import { readSettings, setAuthType } from '../../src/settings/index.js';

let root: string;
let stateDir: string;
let file: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-settings-'));
  stateDir = path.join(root, 'home', '.gemini', 'antigravity-acp');
  file = path.join(stateDir, 'settings.json');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function put(text: string, mode = 0o644): void {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, text);
  fs.chmodSync(file, mode);
}

const modeOf = (p: string): number => fs.statSync(p).mode & 0o777;

function usageFailure(fn: () => unknown): AgyError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgyError);
    expect((err as AgyError).exit).toBe(2);
    return err as AgyError;
  }
  throw new Error('expected a usage error');
}

describe('setAuthType: new files', () => {
  it('creates the state dir 0700 and a 0600 file, whatever the umask', () => {
    const old = process.umask(0o000);
    try {
      const r = setAuthType(stateDir, 'oauth-personal');
      expect(r).toMatchObject({
        written: true,
        created: true,
        stateDirCreated: true,
        type: 'oauth-personal',
        mode: 0o600,
      });
    } finally {
      process.umask(old);
    }
    expect(modeOf(stateDir)).toBe(0o700);
    expect(modeOf(file)).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe('{\n  "auth": {\n    "type": "oauth-personal"\n  }\n}\n');
  });

  it('writes vertex-ai as agent-platform, with the gcp values', () => {
    const r = setAuthType(stateDir, 'vertex-ai', { project: 'p', location: 'europe-west4' });
    expect(r).toMatchObject({ type: 'agent-platform', legacyInput: 'vertex-ai' });
    expect(readSettings(stateDir).data).toEqual({
      auth: { type: 'agent-platform' },
      gcp: { project: 'p', location: 'europe-west4' },
    });
  });

  it('an error about vertex-ai says it is the old name of agent-platform', () => {
    expect(() => setAuthType(stateDir, 'vertex-ai', {})).toThrow(
      /^vertex-ai \(the old name of agent-platform\) needs a project and a location/,
    );
    expect(() => setAuthType(stateDir, 'agent-platform', {})).toThrow(/^agent-platform needs a project/);
  });

  it('takes project and location from GOOGLE_CLOUD_* for oauth-business, not for oauth-personal', () => {
    const env = { GOOGLE_CLOUD_PROJECT: 'envp', GOOGLE_CLOUD_LOCATION: 'us-east5' };
    const r = setAuthType(stateDir, 'oauth-business', { env, location: 'us-central1' });
    expect(r.project).toEqual({ value: 'envp', source: 'env' });
    expect(r.location).toEqual({ value: 'us-central1', source: 'flag' });
    fs.rmSync(file);
    setAuthType(stateDir, 'oauth-personal', { env });
    expect(readSettings(stateDir).data).toEqual({ auth: { type: 'oauth-personal' } });
  });

  it('never writes an API key, even when one is in the environment', () => {
    setAuthType(stateDir, 'gemini-api-key', { env: { GEMINI_API_KEY: 'AIza-do-not-write' } });
    setAuthType(stateDir, 'agent-platform', { env: { GOOGLE_API_KEY: 'AIza-do-not-write-either' } });
    expect(fs.readFileSync(file, 'utf8')).not.toContain('AIza');
  });
});

describe('setAuthType: existing files', () => {
  it('keeps unknown keys, their order and their exact text; keeps the mode', () => {
    const text =
      '{\n  "10": 1.0,\n  "ui": {"theme": "dark"},\n  "auth": {"type": "gemini-api-key", "x": [1]},\n  "big": 12345678901234567890\n}\n';
    put(text, 0o600);
    setAuthType(stateDir, 'oauth-business', { project: 'p', location: 'us-central1' });
    expect(fs.readFileSync(file, 'utf8')).toBe(
      '{\n  "10": 1.0,\n  "ui": {"theme": "dark"},\n  "auth": {"type": "oauth-business", "x": [1]},\n  "big": 12345678901234567890,\n  "gcp": {\n    "project": "p",\n    "location": "us-central1"\n  }\n}\n',
    );
    expect(modeOf(file)).toBe(0o600);
  });

  it('does not rewrite a file that already says the same', () => {
    put('{"auth": {"type": "oauth-personal"}}');
    const before = fs.statSync(file);
    const r = setAuthType(stateDir, 'oauth-personal');
    expect(r.written).toBe(false);
    expect(fs.statSync(file).ino).toBe(before.ino);
  });

  it('uses gcp values already in the file to satisfy oauth-business', () => {
    put('{"gcp": {"project": "p", "location": "us-central1"}}');
    expect(setAuthType(stateDir, 'oauth-business').project).toEqual({ value: 'p', source: 'file' });
  });

  it('never writes through a symlink: a live or dangling link is refused (unsafe-symlink) and nothing changes', () => {
    fs.mkdirSync(stateDir, { recursive: true });
    const real = path.join(root, 'real-settings.json');
    fs.writeFileSync(real, '{"keep": true}\n');
    fs.symlinkSync(real, file);
    for (const force of [false, true]) {
      const err = usageFailure(() => setAuthType(stateDir, 'oauth-personal', { force }));
      expect(err.code).toBe('unsafe-symlink');
      expect(err.message).toContain(file);
      expect(err.message).toContain(real);
      expect(err.hint).toMatch(/replace the link/);
    }
    expect(fs.readFileSync(real, 'utf8')).toBe('{"keep": true}\n');

    fs.rmSync(file);
    const missing = path.join(root, 'not-yet.json');
    fs.symlinkSync(missing, file);
    expect(usageFailure(() => setAuthType(stateDir, 'gemini-api-key')).code).toBe('unsafe-symlink');
    expect(fs.existsSync(missing)).toBe(false);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
  });
});

describe('setAuthType: bad input changes nothing', () => {
  const original = '{\n  "auth": {"type": "oauth-personal"},\n  "keep": 1\n}\n';

  it.each([
    ['an unknown type', 'api-key', {}, /unknown auth type "api-key"; use one of: oauth-personal/],
    ['oauth-business without a project', 'oauth-business', { location: 'us-central1' }, /pass --project ID/],
    ['oauth-business without anything', 'oauth-business', {}, /--project ID --location REGION/],
    ['agent-platform with neither key nor project', 'agent-platform', {}, /or set GOOGLE_API_KEY/],
    [
      'a zone for a location',
      'oauth-business',
      { project: 'p', location: 'us-central1-a' },
      /zone, not a region: use us-central1/,
    ],
    ['a non-region location', 'agent-platform', { project: 'p', location: 'Mars' }, /not a region name/],
    ['an empty project', 'oauth-business', { project: '', location: 'us' }, /--project: it is empty/],
    [
      'a bad GOOGLE_CLOUD_LOCATION',
      'oauth-business',
      { project: 'p', env: { GOOGLE_CLOUD_LOCATION: 'nowhere' } },
      /GOOGLE_CLOUD_LOCATION: .*pass --location/,
    ],
  ])('%s', (_label, type, options, message) => {
    put(original);
    const err = usageFailure(() => setAuthType(stateDir, type, options));
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('\n');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(fs.readdirSync(stateDir)).toEqual(['settings.json']);
  });

  it('creates no state dir for bad input', () => {
    usageFailure(() => setAuthType(stateDir, 'nope'));
    expect(fs.existsSync(stateDir)).toBe(false);
  });
});

describe('setAuthType: unusable files and --force', () => {
  it.each([
    ['not JSON', '{\n  "auth": {"type": "oauth-personal"}\n  "x": 1\n}\n', 'line 3, column 3'],
    ['auth not an object', '{"auth": "oauth-personal"}', 'line 1, column 10'],
    ['top level an array', '[]', 'line 1, column 1'],
  ])('refuses a file that is %s, naming the line and column; --force moves it aside', (_label, text, where) => {
    put(text, 0o640);
    const err = usageFailure(() => setAuthType(stateDir, 'gemini-api-key'));
    expect(err.message).toContain(where);
    expect(err.message).toContain('--force');
    expect(fs.readFileSync(file, 'utf8')).toBe(text);

    const r = setAuthType(stateDir, 'gemini-api-key', { force: true, now: new Date('2026-09-03T10:15:00.123Z') });
    expect(r.backup).toBe(`${file}.bak-20260903T101500Z`);
    expect(fs.readFileSync(r.backup!, 'utf8')).toBe(text);
    expect(modeOf(r.backup!)).toBe(0o640);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ auth: { type: 'gemini-api-key' } });
    expect(modeOf(file)).toBe(0o640);
  });

  it('never overwrites an earlier backup from the same second', () => {
    put('{', 0o644);
    const now = new Date('2026-09-03T10:15:00Z');
    fs.writeFileSync(`${file}.bak-20260903T101500Z`, 'older');
    const r = setAuthType(stateDir, 'oauth-personal', { force: true, now });
    expect(r.backup).toBe(`${file}.bak-20260903T101500Z-1`);
    expect(fs.readFileSync(`${file}.bak-20260903T101500Z`, 'utf8')).toBe('older');
  });

  it('writes over an empty file without --force (nothing to lose) and without a backup', () => {
    put('  \n');
    expect(setAuthType(stateDir, 'oauth-personal')).toMatchObject({ written: true, backup: undefined });
    expect(fs.readdirSync(stateDir)).toEqual(['settings.json']);
  });
});
